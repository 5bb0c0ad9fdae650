"""Where tests read the calendar date, read from source (nothing runs)."""

from __future__ import annotations

from swe_forge.gates.clock import clock_reads

SOURCE = b"""
import datetime as dt
import time
from datetime import date, datetime as DT

def test_year():
    assert dt.datetime.now().year >= 2020
    assert date.today()
    assert DT.utcnow()
    assert DT.now(tz=dt.timezone.utc)
    assert time.strftime("%Y")

def test_not_the_date():
    start = time.time()
    assert time.localtime(0).tm_year == 1970
    assert time.strftime("%Y", time.gmtime(0)) == "1970"
    assert DT.fromtimestamp(0)
"""


def test_calendar_reads_are_found_durations_and_given_times_are_not() -> None:
    got = clock_reads({"tests/test_a.py": SOURCE})
    lines = [s.split()[0] for s in got["sites"]]
    assert lines == [f"tests/test_a.py:{n}" for n in (7, 8, 9, 10, 11)]
    assert got["reads"] == 5 and got["controlled"] is False and got["unparsed"] == []


def test_a_clock_set_by_the_test_is_controlled() -> None:
    frozen = b"from freezegun import freeze_time\n\n@freeze_time('2020-01-01')\ndef test_x():\n    import datetime\n    assert datetime.date.today().year == 2020\n"
    got = clock_reads({"tests/test_f.py": frozen, "tests/broken.py": b"def (:\n"})
    assert got["reads"] == 1 and got["controlled"] is True
    assert got["unparsed"] == ["tests/broken.py"]
