"""``report --html``: one self-contained page with the funnel, yields, reasons, models and
timings; rendered in headless Chromium, its text and its bars must show the figures."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from swe_forge.commands.report_html import render_html, report_data
from tests import record_samples as samples


def _records(tmp_path: Path) -> list[Path]:
    cands, tasks, rejs, results, images = [], [], [], [], []
    for n in range(1, 8):
        iid = f"acme__widgets-{n}"
        cands.append(samples.candidate(instance_id=iid, repo="acme/widgets"))
    for n in (1, 2, 3, 4):
        iid = f"acme__widgets-{n}"
        task = samples.task(instance_id=iid, repo="acme/widgets")
        task["harness"] = {**task["harness"], "runner": "go-test"}
        task["gates"] = {**task["gates"], "seconds": 10.0 * n}
        task["environment"] = {}
        tasks.append(task)
        for model, status in (
            ("gold", "resolved"),
            ("policy-a", "unresolved" if n % 2 else "resolved"),
        ):
            results.append(
                samples.result(
                    instance_id=iid,
                    model_name_or_path=model,
                    status=status,
                    reward=1.0 if status == "resolved" else 0.0,
                    timings={"total": 2.0 * n},
                )
            )
    for n, reason in ((5, "no_fail_to_pass"), (6, "no_fail_to_pass"), (7, "build_failed")):
        iid = f"acme__widgets-{n}"
        rejs.append(samples.rejection(instance_id=iid, repo="acme/widgets", reason=reason))
        images.append({"record_type": "images", "instance_id": iid, "recipe": {"ecosystem": "go"}})
    files = []
    for name, rows in (
        ("candidates", cands),
        ("tasks", tasks),
        ("admit-rejected", rejs),
        ("results", results),
        ("images", images),
    ):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        files.append(path)
    return files


def test_report_data(tmp_path: Path) -> None:
    data = report_data(_records(tmp_path))
    assert data["funnel"]["admitted"] == 4 and data["funnel"]["candidates"] == 7
    go = data["languages"]["go"]
    assert (go["judged"], go["environments"], go["admitted"]) == (7, 6, 4)
    assert data["models"]["policy-a"]["resolved"] == 2 and data["models"]["gold"]["resolved"] == 4


def test_page_is_self_contained_and_deterministic(tmp_path: Path) -> None:
    files = _records(tmp_path)
    page = render_html(files)
    assert page == render_html(files)
    assert "<script" not in page and "http://" not in page and "https://" not in page
    assert "no_fail_to_pass" in page and "policy-a" in page and "57%" in page  # 4 of 7


@pytest.mark.browser
def test_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    assert chromium, "chromium is missing: scripts/ensure-chromium.sh installs it"
    files = _records(tmp_path)
    page = tmp_path / "report.html"
    got = subprocess.run(
        [sys.executable, "-m", "swe_forge", "report", *map(str, files), "--html", str(page)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0, got.stderr
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + str(tmp_path)]
    dom = subprocess.run(
        [chromium, *flags, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    # What the browser made of it: the figures are in the rendered document.
    for figure in ("acme/widgets", "57%", "policy-a", "no_fail_to_pass", "build_failed"):
        assert figure in dom, figure
    shot = tmp_path / "shot.png"
    subprocess.run(
        [chromium, *flags, "--window-size=1200,1600", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    colours = Counter(image.get_flattened_data())
    # The funnel's bars (#3b6fd8), the reasons' (#d0543b) and the models' (#2e9e6b) were drawn.
    for rgb in ((0x3B, 0x6F, 0xD8), (0xD0, 0x54, 0x3B), (0x2E, 0x9E, 0x6B)):
        assert colours.get(rgb, 0) > 200, (rgb, colours.most_common(5))
