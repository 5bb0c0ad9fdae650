"""How the host reads the serving supervisor's answers off the container's stdout (no docker:
the stream is a list of chunks, cut anywhere)."""

from __future__ import annotations

import json
import threading
from typing import Any

from swe_forge.gates.sandbox import ANSWER_TAG, RESULT_CAP, Answers


class Ctr:
    def __init__(self) -> None:
        self.killed = 0

    def kill(self) -> None:
        self.killed += 1


def frame(n: int, obj: Any) -> bytes:
    data = json.dumps(obj).encode()
    return ANSWER_TAG + b" %d %d\n" % (n, len(data)) + data + b"\n"


def chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_answers_cut_anywhere_are_read_whole_and_in_their_place() -> None:
    stream = frame(1, {"status": "ok", "x": "a" * 300}) + frame(2, {"status": "ran"})
    for size in (1, 3, 7, 64, len(stream)):
        answers = Answers(iter(chunks(stream, size)), Ctr())
        two, how2 = answers.wait(2, 5)
        one, how1 = answers.wait(1, 5)
        assert (how1, how2) == ("answered", "answered")
        assert json.loads(one or b"")["x"] == "a" * 300
        assert json.loads(two or b"") == {"status": "ran"}


def test_noise_before_an_answer_is_skipped() -> None:
    stream = b"garbage SWE-FORGE not a tag\n" + frame(1, {"status": "ok"})
    answers = Answers(iter(chunks(stream, 5)), Ctr())
    got, how = answers.wait(1, 5)
    assert how == "answered" and json.loads(got or b"") == {"status": "ok"}


def test_a_stream_that_ends_without_the_answer_says_so() -> None:
    answers = Answers(iter([frame(1, {"status": "ok"})[:20]]), Ctr())
    assert answers.wait(1, 5) == (None, "ended")


def test_an_answer_larger_than_the_cap_kills_the_container() -> None:
    ctr = Ctr()
    head = ANSWER_TAG + b" 1 %d\n" % (RESULT_CAP + 1)
    answers = Answers(iter([head, b"x" * 100]), ctr)
    assert answers.wait(1, 5) == (None, "overflow")
    assert ctr.killed == 1


def test_a_flood_of_bytes_without_a_tag_is_dropped_as_it_comes() -> None:
    answers = Answers(iter([b"y" * (1 << 20)] * 20 + [frame(1, {"status": "ok"})]), Ctr())
    got, how = answers.wait(1, 10)
    assert how == "answered" and json.loads(got or b"") == {"status": "ok"}


def test_no_answer_in_time_is_a_timeout() -> None:
    gate = threading.Event()

    def slow() -> Any:
        gate.wait(10)
        yield frame(1, {"status": "ok"})

    answers = Answers(slow(), Ctr())
    try:
        assert answers.wait(1, 0.2) == (None, "timeout")
    finally:
        gate.set()
    assert answers.wait(1, 5)[1] == "answered"
