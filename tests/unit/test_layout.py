"""The package's layering: typer only in the CLI package, each command group a module of its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "swe_forge"


def test_only_the_cli_package_imports_typer() -> None:
    pattern = re.compile(r"^\s*(import|from) typer\b", re.M)
    outside = sorted(
        str(p.relative_to(ROOT))
        for p in PKG.rglob("*.py")
        if "cli" not in p.relative_to(PKG).parts[:1] and pattern.search(p.read_text())
    )
    assert outside == []


def test_each_command_group_is_a_module_of_its_own() -> None:
    modules = {p.stem: p for p in (PKG / "cli").glob("*.py")}
    for group in ("mine", "example", "images", "admit", "export", "verify", "run", "report"):
        assert group in modules, group
    # The wiring stays small: a command module that grows past this has logic that belongs in
    # commands/ or below.
    sizes = {name: len(p.read_text().splitlines()) for name, p in modules.items()}
    assert max(sizes.values()) <= 700, sizes


def test_help_lists_the_commands_in_the_pipeline_s_order() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "swe_forge", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    listed = re.findall(r"^  ([a-z]+) {2,}", out.split("Commands:", 1)[1], re.M)
    assert listed[:9] == [
        "mine",
        "license",
        "admit",
        "export",
        "schema",
        "verify",
        "run",
        "merge",
        "report",
    ]
    assert set(listed[9:]) == {"example", "images"}


def test_the_ecosystem_base_imports_no_adapter() -> None:
    # The registry lives in ecosystems/__init__.py; base.py is what adapters build on, and an
    # import of an adapter from it (even inside a function) is the circle the seam must not have.
    text = (PKG / "ecosystems" / "base.py").read_text()
    adapters = [p.name for p in (PKG / "ecosystems").iterdir() if (p / "__init__.py").exists()]
    assert adapters, "no adapter packages found"
    found = [
        a
        for a in adapters
        if re.search(rf"^\s*(from|import) swe_forge\.ecosystems\.{a}\b", text, re.M)
    ]
    assert found == []


#: Scripts that run only in another environment: SWE-bench's harness lives in its own venv
#: (scripts/swebench-venv.sh), and tests/docker/test_swebench.py runs it there.
OTHER_VENV_SCRIPTS = {"swebench_eval.py"}


def test_every_script_starts() -> None:
    # A script whose import broke (bench_ray.py imported a function bench_verify.py no longer
    # had) is found when someone needs the benchmark; --help finds it now.
    scripts = sorted(p for p in (ROOT / "scripts").glob("*.py") if p.name not in OTHER_VENV_SCRIPTS)
    assert len(scripts) >= 10
    broken = {}
    for script in scripts:
        proc = subprocess.run(
            [sys.executable, str(script), "--help"],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
            timeout=60,
        )
        if proc.returncode != 0 or "usage" not in (proc.stdout + proc.stderr).lower():
            broken[script.name] = (proc.stderr or proc.stdout)[-300:]
    assert broken == {}
