"""Base, env and instance images with the real engine; audits that catch leaks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_forge.commands.images import read_candidates, run_audit, run_build
from swe_forge.config import load_config
from swe_forge.engine import Engine, local_name
from swe_forge.example import load_expectations
from swe_forge.images.audit import audit_image
from tests.docker.conftest import ExampleImages


def test_every_candidate_gets_images(example_images: ExampleImages) -> None:
    expected = {
        f"swe-forge__textkit-{pr['number']}"
        for pr in load_expectations()["prs"]
        if pr["mine"]["candidate"]
    }
    recs = example_images.records
    assert set(recs) == expected
    assert all(r["status"] == "ok" for r in recs.values()), [r["detail"] for r in recs.values()]
    # One lock for the whole example: every task shares one env image.
    assert len({r["env_image"] for r in recs.values()}) == 1
    assert all(
        r["python"] == "3.11" and str(r["base_image"]).startswith(local_name("base") + ":bookworm")
        for r in recs.values()
    )


def test_instance_contents(engine: Engine, example_images: ExampleImages) -> None:
    rec = example_images.records["swe-forge__textkit-1"]
    script = (
        "set -e; id -u; cd /testbed; git log --all --format=%H | wc -l; git status --porcelain | wc -l; "
        "test ! -e tests/test_wrap_exact.py && echo no-added-file; "
        "python -c 'import textkit, sys; print(textkit.__file__)'; "
        "python -m pytest -q -p no:cacheprovider tests 2>&1 | tail -1"
    )
    code, out = engine.run(str(rec["instance_image"]), ["/bin/sh", "-c", script])
    lines = out.strip().splitlines()
    assert code == 0, out
    assert lines[0] == "1000"  # a non-root user
    assert lines[1] == "1"  # one commit
    assert lines[2] == "0"  # clean work tree
    assert lines[4].startswith("/testbed/src/textkit/")  # installed from /testbed, editable
    assert "passed" in lines[-1]


def test_no_network_inside(engine: Engine, example_images: ExampleImages) -> None:
    rec = example_images.records["swe-forge__textkit-1"]
    code, out = engine.run(
        str(rec["instance_image"]),
        ["python", "-c", "import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)"],
    )
    assert code != 0 and ("unreachable" in out or "Errno" in out or "timed out" in out)


def test_audit_passes_on_built_images(example_images: ExampleImages) -> None:
    reports = run_audit(example_images.candidates, example_images.images)
    assert len(reports) == len(example_images.records)
    assert all(r.passed for r in reports), [r.findings for r in reports if not r.passed]
    for r in reports:
        assert (
            r.git["commits_reachable"] == 1 and r.git["objects_total"] == r.git["objects_reachable"]
        )


LEAKS = {
    "tag": "RUN git tag v99",
    "unreachable_commit": (
        "RUN git -c user.name=x -c user.email=x@x commit -q --allow-empty -m future "
        "&& git reset -q --hard HEAD~1 || git update-ref -d refs/heads/main HEAD; rm -rf .git/logs"
    ),
    "branch": "RUN git branch future",
    "test_file": "COPY leaked.py /testbed/tests/test_wrap_leaked.py",
    "cached_copy": "COPY leaked.py /home/swe/.cache/leaked.py",
    "foreign_dist": (
        "USER root\nRUN mkdir -p /opt/venv/lib/python3.11/site-packages/textkit-9.9.dist-info "
        "&& printf 'Name: textkit\\nVersion: 9.9\\n' > /opt/venv/lib/python3.11/site-packages/textkit-9.9.dist-info/METADATA"
    ),
}


@pytest.mark.parametrize("leak", sorted(LEAKS))
def test_audit_catches_leaks(
    engine: Engine, example_images: ExampleImages, tmp_path: Path, leak: str
) -> None:
    cand = next(
        c
        for c in read_candidates(example_images.candidates)
        if c.instance_id == "swe-forge__textkit-1"
    )
    rec = example_images.records[cand.instance_id]
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    # The leaked file: the test patch's added test function, as a file.
    added = "".join(
        line[1:] + "\n"
        for line in cand.test_patch.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    )
    (ctx / "leaked.py").write_text(added)
    (ctx / "Dockerfile").write_text(f"FROM {rec['instance_image']}\n{LEAKS[leak]}\n")
    tag = f"{local_name('test-leaky')}:{leak.replace('_', '-')}"
    engine.build(ctx, tag, labels={"org.swe-forge.kind": "test-leak"})
    try:
        report = audit_image(
            engine,
            tag,
            instance_id=cand.instance_id,
            test_patch=cand.test_patch,
            project_name="textkit",
        )
        assert not report.passed, f"{leak} was not caught"
        checks = {f["check"] for f in report.findings}
        want = {
            "tag": "history",
            "unreachable_commit": "history",
            "branch": "history",
            "test_file": "test_content",
            "cached_copy": "test_content",
            "foreign_dist": "distribution",
        }[leak]
        assert want in checks, report.findings
    finally:
        engine.remove_image(tag, force=True)


def test_rebuild_reuses_everything(example_images: ExampleImages) -> None:
    again = example_images.root / "images-again.jsonl"
    result = run_build(
        example_images.candidates, again, config=load_config(), only=["swe-forge__textkit-3"]
    )
    (rec,) = result.records
    assert rec.status == "ok"
    assert rec.reused == {"base": True, "wheelhouse": True, "env": True, "instance": True}
    assert rec.instance_image == example_images.records["swe-forge__textkit-3"]["instance_image"]
    assert (
        json.loads(again.read_text())["lock_digest"]
        == example_images.records["swe-forge__textkit-3"]["lock_digest"]
    )
