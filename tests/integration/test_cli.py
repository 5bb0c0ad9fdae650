"""The command line as a user meets it: exit codes, one-line errors with hints, --help."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from swe_forge.errors import InputError
from swe_forge.git.writer import RepoWriter
from swe_forge.mining.sources import RepoSource, expand_sources, materialize
from tests.conftest import RepoBuilder


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "swe_forge", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_help_teaches() -> None:
    out = cli("--help")
    assert out.returncode == 0
    assert "mine" in out.stdout and "Exit codes" in out.stdout and "130" in out.stdout
    out = cli("mine", "--help")
    assert out.returncode == 0 and "--rejected" in out.stdout and "Example:" in out.stdout


def test_version() -> None:
    out = cli("--version")
    assert out.returncode == 0 and out.stdout.startswith("swe-forge ")


def test_missing_path(tmp_path: Path) -> None:
    out = cli("mine", str(tmp_path / "nope"), "-o", str(tmp_path / "c.jsonl"))
    assert out.returncode == 4
    assert "error: no such path: " in out.stderr and "hint:" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "c.jsonl").exists()


def test_relative_source_is_recorded_absolute(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo("relrepo")
    repo.pr(
        1,
        {
            "pkg/core.py": "def add(a, b):\n    return a + b\n",
            "tests/test_core.py": "def test_x():\n    pass\n",
        },
        "Fix add",
    )
    # Typed relative to the folder mine runs in, as a user would.
    out = cli("mine", repo.path.name, "-o", "c.jsonl", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (line,) = (tmp_path / "c.jsonl").read_text().splitlines()
    source = json.loads(line)["provenance"]["source"]
    assert source == str(repo.path.resolve()) and Path(source).is_absolute()
    assert json.loads(out.stdout)["per_repo"][0]["source"] == source
    # A later command, from another folder, opens the repository from the record.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert materialize(RepoSource(source)) == Path(source)
    # A record that kept the path as typed (older swe-forge) says what is wrong.
    with pytest.raises(InputError) as info:
        materialize(RepoSource(repo.path.name))
    assert str(info.value).startswith(f"no such path: {repo.path.name}")
    assert info.value.exit_code == 4 and "mined from" in info.value.hint


def test_list_file_paths_are_relative_to_the_list(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo("listed")
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "repos.txt").write_text(f"../{repo.path.name}  acme/listed\n")
    (src,) = expand_sources([str(lists / "repos.txt")])
    assert src.spec == str(repo.path.resolve()) and src.name == "acme/listed"
    (lists / "bad.txt").write_text("./not-there\n")
    with pytest.raises(InputError) as info:
        expand_sources([str(lists / "bad.txt")])
    assert "bad.txt:1: no such path: ./not-there" in str(info.value)
    assert str(lists.resolve()) in info.value.hint


def test_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    out = cli("mine", str(tmp_path / "plain"), "-o", str(tmp_path / "c.jsonl"))
    assert out.returncode == 5 and "not a git repository" in out.stderr and "hint:" in out.stderr


def test_empty_history(tmp_path: Path) -> None:
    RepoWriter.init(tmp_path / "empty")
    out = cli("mine", str(tmp_path / "empty"), "-o", str(tmp_path / "c.jsonl"))
    assert out.returncode == 5 and "has no commits" in out.stderr


def test_no_default_branch(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo()
    w = repo.writer
    w.create_branch("trunk", checkout=True)
    w.run("checkout", "--detach", "trunk")
    w.delete_branch("main")
    out = cli("mine", str(repo.path), "-o", str(tmp_path / "c.jsonl"))
    assert out.returncode == 5 and "no default branch" in out.stderr and "--branch" in out.stderr
    out = cli("mine", str(repo.path), "--branch", "trunk", "-o", str(tmp_path / "c.jsonl"))
    assert out.returncode == 0, out.stderr


def test_partial_failure_keeps_the_good_repository(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    repo.pr(
        1,
        {
            "pkg/core.py": "def add(a, b):\n    return a + b\n",
            "tests/test_core.py": "def test_x():\n    pass\n",
        },
    )
    (tmp_path / "plain").mkdir()
    out = cli(
        "mine", str(tmp_path / "plain"), str(repo.path), "-o", str(tmp_path / "c.jsonl"), "--json"
    )
    assert out.returncode == 11, out.stderr
    summary = json.loads(out.stdout)
    assert summary["candidates"] == 1 and summary["repos_failed"] == 1
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 1


def test_bad_config(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("mine:\n  max_line_changed: 10\n")
    out = cli("--config", str(cfg), "mine", str(make_repo().path))
    assert out.returncode == 3
    assert "unknown configuration key 'mine.max_line_changed'" in out.stderr
    assert "did you mean 'max_lines_changed'" in out.stderr


def test_debug_shows_traceback(tmp_path: Path) -> None:
    out = cli("--debug", "mine", str(tmp_path / "nope"))
    assert out.returncode == 4 and "Traceback" in out.stderr


def test_bad_date(make_repo: Callable[..., RepoBuilder]) -> None:
    out = cli("mine", str(make_repo().path), "--since", "yesterday")
    assert out.returncode == 2 and "ISO 8601" in out.stderr


def test_unknown_option_is_a_usage_error() -> None:
    out = cli("mine", "--frobnicate")
    assert out.returncode == 2


def test_binary_licence_is_a_licence_error(make_repo: Callable[..., RepoBuilder]) -> None:
    repo = make_repo()
    repo.commit({"LICENSE": b"\x00\x01binary"}, "Break the licence")
    out = cli("license", str(repo.path))
    assert out.returncode == 6 and "binary" in out.stderr and "hint:" in out.stderr


def test_licence_command_json(make_repo: Callable[..., RepoBuilder]) -> None:
    out = cli("license", str(make_repo().path), "--json")
    assert out.returncode == 0
    verdict = json.loads(out.stdout)
    assert verdict["allowed"] and verdict["expression"] == "MIT" and len(verdict["commit"]) == 40


def test_example_and_mine_end_to_end(tmp_path: Path) -> None:
    out = cli("example", "create", str(tmp_path / "textkit"))
    assert out.returncode == 0 and "swe-forge/textkit" in out.stdout
    out = cli("example", "create", str(tmp_path / "textkit"))
    assert out.returncode == 4 and "hint:" in out.stderr  # exists: needs --force
    out = cli(
        "mine",
        str(tmp_path / "textkit"),
        "-o",
        str(tmp_path / "c.jsonl"),
        "--rejected",
        str(tmp_path / "r.jsonl"),
        "--json",
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["candidates"] == 7 and summary["prs_found"] == 14
    assert summary["rejected"]["license_not_permissive"] == 2
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.parametrize("args", [["example", "--help"], ["license", "--help"]])
def test_subcommand_help(args: list[str]) -> None:
    assert cli(*args).returncode == 0


# ------------------------------------------------------------------ verify: bad inputs
def _task(instance_id: str) -> dict[str, object]:
    """A task manifest's fields (enough to be read; nothing here reaches Docker)."""
    return {
        "instance_id": instance_id,
        "repo": "o/r",
        "base_commit": "0" * 40,
        "patch": "diff --git a/x b/x\n",
        "test_patch": "",
        "problem_statement": "p",
        "hints_text": "",
        "created_at": "2024-01-01T00:00:00Z",
        "version": "0.1",
        "environment_setup_commit": "0" * 40,
        "FAIL_TO_PASS": ["t::a"],
        "PASS_TO_PASS": [],
        "image": {},
        "harness": {},
        "gates": {},
        "license": {},
        "provenance": {},
        "audit": {},
        "schema_version": 1,
        "record_type": "task",
    }


def _lines(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    "case, expect",
    [
        ("empty_tasks", "holds no tasks"),
        ("results_as_tasks", "holds verification results"),
        ("tasks_as_predictions", "holds task manifests (from `swe-forge admit`), not predictions"),
        ("empty_predictions", "holds no predictions"),
        ("dict_patch", "model_patch is a dict"),
        ("two_patches", "two different predictions for o__r-1"),
        ("unknown_gold_instance", "no such task"),
        ("unwritable_output", "cannot write"),
        ("output_is_a_folder", "is a folder"),
    ],
)
def test_verify_refuses_bad_input_in_one_line(tmp_path: Path, case: str, expect: str) -> None:
    tasks = _lines(tmp_path / "tasks.jsonl", [_task("o__r-1")])
    args = ["verify", "--tasks", str(tasks), "-o", str(tmp_path / "results.jsonl")]
    pred = {"instance_id": "o__r-1", "model_name_or_path": "m", "model_patch": "x"}
    if case == "empty_tasks":
        tasks.write_text("")
        args += ["--gold"]
    elif case == "results_as_tasks":
        _lines(tasks, [{"record_type": "verify_result", "instance_id": "o__r-1"}])
        args += ["--gold"]
    elif case == "tasks_as_predictions":
        args += ["--predictions", str(tasks)]
    elif case == "empty_predictions":
        args += ["--predictions", str(_lines(tmp_path / "p.jsonl", []))]
    elif case == "dict_patch":
        rows = [{**pred, "model_patch": {"diff": "x"}}]
        args += ["--predictions", str(_lines(tmp_path / "p.jsonl", rows))]
    elif case == "two_patches":
        rows = [pred, {**pred, "model_patch": "y"}]
        args += ["--predictions", str(_lines(tmp_path / "p.jsonl", rows))]
    elif case == "unknown_gold_instance":
        args += ["--gold", "--instance", "o__r-1", "--instance", "o__r-999"]
    elif case == "unwritable_output":
        args = [a if a != str(tmp_path / "results.jsonl") else "/nonexistent/r.jsonl" for a in args]
        args += ["--gold"]
    elif case == "output_is_a_folder":
        args = [a if a != str(tmp_path / "results.jsonl") else str(tmp_path) for a in args]
        args += ["--gold"]
    out = cli(*args)
    assert out.returncode == 4, out.stderr
    assert expect in out.stderr and "Traceback" not in out.stderr
    assert out.stderr.startswith("error: ")
    assert not (tmp_path / "results.jsonl").exists()


ALL_COMMANDS = [
    ["mine"], ["license"], ["admit"], ["audit-tests"], ["verify"], ["run"], ["merge"], ["report"],
    ["export"],
    ["schema"], ["example", "create"], ["example", "expected"], ["images", "base"],
    ["images", "build"], ["images", "ls"], ["images", "audit"], ["images", "prune"],
    ["images", "push"], ["images", "pull"], ["images", "export"], ["images", "import"],
]  # fmt: skip


def test_every_command_speaks_json_and_lists_its_exit_codes_under_h() -> None:
    # Every command the CLI lists is in ALL_COMMANDS (a new command must speak --json too).
    listed = set()
    for group in ([], ["images"], ["example"]):
        text = cli(*group, "-h").stdout
        section = text.split("Commands:", 1)[1].split("\n\n", 1)[0]
        listed |= {(*group, ln.split()[0]) for ln in section.splitlines() if ln.startswith("  ")}
    assert listed - {("images",), ("example",)} == {tuple(c) for c in ALL_COMMANDS}
    for args in ALL_COMMANDS:
        out = cli(*args, "-h")
        assert out.returncode == 0, args
        text = " ".join(out.stdout.split())
        assert "--json" in text and "Exit codes" in text and "4 InputError" in text, args


def test_every_command_lists_its_exit_codes() -> None:
    for args in (["verify"], ["mine"], ["admit"], ["run"], ["export"], ["images", "build"]):
        out = cli(*args, "-h")
        assert out.returncode == 0, args
        text = " ".join(out.stdout.split())
        assert "Exit codes" in text and "4 InputError" in text, args
    verify = " ".join(cli("verify", "-h").stdout.split())
    assert "21 infra_errors" in verify and "21 some ended in an infrastructure error" in verify


def test_verify_takes_its_tasks_file_like_every_command(tmp_path: Path) -> None:
    tasks = _lines(tmp_path / "tasks.jsonl", [_task("o__r-1")])
    both = cli("verify", str(tasks), "--tasks", str(tasks), "--gold")
    assert both.returncode == 2 and "give the tasks file once" in both.stderr
    # Positional or --tasks: read the same way (here refused the same way: no such task).
    for args in ([str(tasks)], ["--tasks", str(tasks)]):
        out = cli("verify", *args, "--gold", "--instance", "nope")
        assert out.returncode == 4 and "no such task" in out.stderr


def test_help_lists_only_the_codes_a_command_can_return() -> None:
    """`license` mines nothing and writes nothing: no 11 (partial failure) nor 17/18."""
    text = " ".join(cli("license", "-h").stdout.split())
    assert "6 LicenseError" in text and "143 terminated" in text
    assert "11 PartialFailure" not in text and "17 OutputError" not in text
    verify = " ".join(cli("verify", "-h").stdout.split())
    assert "16 DigestError" in verify and "5 RepositoryError" not in verify
