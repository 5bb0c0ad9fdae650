"""The test-strength gate: mutants folded into the gold patch, graded, classified and recorded;
its budget, its policy in admission, and the score in exports and the report.

The mutation engine is faked here (``swe_forge.mutation.generate``/``changed_lines`` are
monkeypatched, mutants built by hand): these tests are about the gate, not the mutants."""

from __future__ import annotations

import difflib
import hashlib
import json
import subprocess
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from swe_forge import mutation
from swe_forge.admission.admitter import Admitter
from swe_forge.admission.strength import (
    INVALID,
    KILLED,
    SURVIVED,
    ComposeError,
    StrengthSettings,
    candidate_patch,
    classify,
    measure,
)
from swe_forge.admission.swebench import swebench_row
from swe_forge.commands.report import funnel, strength_line
from swe_forge.config import load_config
from swe_forge.errors import ConfigError
from swe_forge.mutation import Mutant
from swe_forge.records import Candidate, Rejection, TaskManifest, VerifyResult
from tests import record_samples as samples

BASE = {
    "src/wrap.py": (
        "def wrap(text, width):\n"
        "    lines = []\n"
        "    for word in text.split():\n"
        "        if lines and len(lines[-1]) + len(word) < width:\n"
        "            lines[-1] += ' ' + word\n"
        "        else:\n"
        "            lines.append(word)\n"
        "    return lines\n"
    ),
    "src/other.py": "A = 1\nB = 2\n",
    "src/tail.py": "def f(x):\n    return x",  # no newline at the end
    # A form feed and a CR inside lines: git ends lines at LF only.
    "src/odd.py": "A = 1\n\x0c\nB = '\u2028'\r\nC = 3\n",
}
GOLD = {
    "src/wrap.py": BASE["src/wrap.py"].replace("< width", "+ 1 <= width"),
    "src/other.py": "A = 1\nB = 3\n",
    "src/tail.py": "def f(x):\n    return x + 1",
    "src/new.py": "def g(n):\n    return n > 0\n",
    "src/odd.py": "A = 1\n\x0c\nB = '\u2028'\r\nC = 4\n",
}


def _git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    # Bytes, not text mode: text mode would turn a CR LF inside a patch into LF.
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        input=stdin.encode() if stdin is not None else None,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode()


def _tree(path: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_bytes(text.encode())


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository at its base commit, and the gold patch as git writes it."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    _tree(root, BASE)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    _tree(root, GOLD)
    _git(root, "add", "-A")
    gold = _git(root, "diff", "--cached")
    _git(root, "reset", "-q", "--hard")
    _git(root, "clean", "-qfdx")
    return root, gold


def _read(root: Path):  # type: ignore[no-untyped-def]
    def read(path: str) -> bytes | None:
        p = root / path
        return p.read_bytes() if p.is_file() else None

    return read


def mutant(path: str, old: str, new: str, operator: str = "comparison") -> Mutant:
    """A mutant of the gold-patched ``path``: ``old`` replaced by ``new`` once."""
    gold = GOLD[path]
    assert old in gold
    text = gold.replace(old, new, 1)
    line = gold[: gold.index(old)].count("\n") + 1
    diff = "".join(
        difflib.unified_diff(
            gold.splitlines(keepends=True),
            text.splitlines(keepends=True),
            f"a/{path}",
            f"b/{path}",
        )
    )
    ident = hashlib.sha256(f"{path}\0{text}".encode()).hexdigest()[:12]
    return Mutant(ident, path, line, operator, f"`{old}` -> `{new}`", text, diff)


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("src/wrap.py", "<= width", "< width"),  # a file the gold patch changes
        ("src/new.py", "n > 0", "n >= 0"),  # a file the gold patch creates
        ("src/tail.py", "x + 1", "x - 1"),  # no newline at the end of the file
        ("src/odd.py", "C = 4", "C = 5"),  # line separators other than LF inside lines
    ],
)
def test_candidate_patch_applies_to_the_base_and_gives_the_mutant(
    repo: tuple[Path, str], path: str, old: str, new: str
) -> None:
    root, gold = repo
    m = mutant(path, old, new)
    patch = candidate_patch(gold, _read(root), m)
    _git(root, "apply", "--check", "-", stdin=patch)
    _git(root, "apply", "-", stdin=patch)
    # The mutated file is the mutant; every other file is as the gold patch leaves it.
    assert (root / path).read_bytes().decode() == m.new_text
    for other, text in GOLD.items():
        if other != path:
            assert (root / other).read_bytes().decode() == text


def test_a_mutant_that_undoes_the_gold_change_leaves_its_file_as_the_base_has_it(
    repo: tuple[Path, str],
) -> None:
    root, gold = repo
    m = mutant("src/other.py", "B = 3", "B = 2", "constant")  # the base's value again
    patch = candidate_patch(gold, _read(root), m)
    assert "src/other.py" not in patch
    _git(root, "apply", "-", stdin=patch)
    assert (root / "src/other.py").read_text() == BASE["src/other.py"]
    assert (root / "src/wrap.py").read_text() == GOLD["src/wrap.py"]
    # A gold patch of that one file, undone whole: the base tree, which the gate saw fail.
    only = "".join(s for s in gold.split("diff --git")[1:] if "src/other.py" in s)
    with pytest.raises(ComposeError, match="undoes the whole gold patch"):
        candidate_patch("diff --git" + only, _read(root), m)


def test_a_mutant_of_a_file_the_gold_patch_does_not_touch_is_not_folded(
    repo: tuple[Path, str],
) -> None:
    root, gold = repo
    stray = Mutant("x", "src/absent.py", 1, "constant", "", "A = 2\n", "")
    with pytest.raises(ComposeError, match="does not change"):
        candidate_patch(gold, _read(root), stray)


def _result(status: str, reward: float = 0.0, **outcomes: str) -> VerifyResult:
    return VerifyResult(
        "o__r-1",
        "mutant",
        status,
        reward,
        fail_to_pass={f"t::{k}": v for k, v in outcomes.items()},
        pass_to_pass={"t::old": "passed"},
    )


@pytest.mark.parametrize(
    ("result", "verdict"),
    [
        (_result("resolved", 1.0, fix="passed"), SURVIVED),
        (_result("unresolved", 0.0, fix="failed"), KILLED),
        # Nothing ran to a verdict: the mutant did not build or load.
        (_result("unresolved", 0.0, fix="missing"), INVALID),
        (_result("timeout"), INVALID),
        (_result("apply_failed"), INVALID),
        (_result("infra_error"), INVALID),
        (_result("resource_limit", 0.0, fix="failed"), INVALID),
    ],
)
def test_classify(result: VerifyResult, verdict: str) -> None:
    assert classify(result)[0] == verdict


MUTANTS = [
    mutant("src/wrap.py", "<= width", "< width", "comparison"),
    mutant("src/wrap.py", "+ 1 <=", "+ 2 <=", "constant"),
    mutant("src/other.py", "B = 3", "B = 4", "constant"),
    mutant("src/new.py", "n > 0", "n >= 0", "comparison"),
    mutant("src/tail.py", "x + 1", "x - 1", "arithmetic"),
]


def _engine(
    monkeypatch: pytest.MonkeyPatch, mutants: list[Mutant], calls: list[dict[str, Any]]
) -> None:
    def changed_lines(gold_patch: str) -> dict[str, set[int]]:
        return {path: {1, 2} for path in GOLD}

    def generate(language: str, files: Any, lines: Any, *, seed: int, limit: int) -> list[Mutant]:
        calls.append(
            {"language": language, "files": dict(files), "lines": dict(lines), "seed": seed}
        )
        return mutants[:limit]

    monkeypatch.setattr(mutation, "changed_lines", changed_lines)
    monkeypatch.setattr(mutation, "generate", generate)


def _grader(verdicts: dict[str, VerifyResult], patches: list[str] | None = None):  # type: ignore[no-untyped-def]
    def grade(patch: str, m: Mutant) -> VerifyResult:
        if patches is not None:
            patches.append(patch)
        return verdicts[m.id]

    return grade


def test_measure_counts_scores_and_keeps_the_survivors(
    repo: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, gold = repo
    calls: list[dict[str, Any]] = []
    _engine(monkeypatch, MUTANTS, calls)
    verdicts = {
        MUTANTS[0].id: _result("resolved", 1.0, fix="passed"),
        MUTANTS[1].id: _result("unresolved", 0.0, fix="failed"),
        MUTANTS[2].id: _result("unresolved", 0.0, fix="failed"),
        MUTANTS[3].id: _result("timeout"),
        MUTANTS[4].id: _result("unresolved", 0.0, fix="failed"),
    }
    patches: list[str] = []
    got = measure(
        language="python",
        gold_patch=gold,
        base_read=_read(root),
        grade=_grader(verdicts, patches),
        settings=StrengthSettings(max_mutants=8, seconds=600, seed=7),
    )
    # The engine got the gold-patched text of the gold patch's files, and the seed.
    assert calls[0]["language"] == "python" and calls[0]["seed"] == 7
    assert calls[0]["files"] == GOLD
    # Each mutant was graded as the gold patch with its change folded in.
    assert len(patches) == 5 and all(p != gold for p in patches)
    record = got.to_dict()
    assert (record["generated"], record["killed"], record["survived"], record["invalid"]) == (
        5,
        3,
        1,
        1,
    )
    assert record["score"] == 0.75
    assert record["survivors"] == [MUTANTS[0].to_dict()]
    assert record["operators"] == {"arithmetic": 1, "comparison": 2, "constant": 2}
    assert [r["verdict"] for r in record["mutants"]] == [
        SURVIVED,
        KILLED,
        KILLED,
        INVALID,
        KILLED,
    ]
    assert record["budget"] == {"max_mutants": 8, "seconds": 600}
    assert record["seed"] == 7 and record["budget_exhausted"] is False
    assert record["error"] is None and record["engine_version"]
    json.dumps(record)  # plain data


def test_no_mutant_starts_after_the_seconds_budget(
    repo: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, gold = repo
    _engine(monkeypatch, MUTANTS, [])
    now = [0.0]

    def grade(patch: str, m: Mutant) -> VerifyResult:
        now[0] += 100.0  # each grading takes 100 s
        return _result("unresolved", 0.0, fix="failed")

    got = measure(
        language="python",
        gold_patch=gold,
        base_read=_read(root),
        grade=grade,
        settings=StrengthSettings(max_mutants=8, seconds=250, seed=0),
        clock=lambda: now[0],
    )
    assert got.generated == 5
    assert got.killed == 3 and len(got.mutants) == 3
    assert got.budget_exhausted is True
    assert got.to_dict()["seconds"] == 300.0


def test_max_mutants_bounds_what_is_graded(
    repo: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, gold = repo
    _engine(monkeypatch, MUTANTS, [])
    got = measure(
        language="python",
        gold_patch=gold,
        base_read=_read(root),
        grade=lambda _p, _m: _result("resolved", 1.0, fix="passed"),
        settings=StrengthSettings(max_mutants=2),
    )
    assert (got.generated, got.survived, got.score) == (2, 2, 0.0)


def test_an_engine_failure_is_recorded_not_raised(
    repo: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, gold = repo

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise NotImplementedError("no engine for cobol")

    monkeypatch.setattr(mutation, "changed_lines", lambda _p: {"src/wrap.py": {4}})
    monkeypatch.setattr(mutation, "generate", broken)
    got = measure(
        language="python",
        gold_patch=gold,
        base_read=_read(root),
        grade=lambda _p, _m: pytest.fail("nothing to grade"),
        settings=StrengthSettings(),
    ).to_dict()
    assert got["generated"] == 0 and got["score"] is None
    assert "NotImplementedError: no engine for cobol" in got["error"]


# -- in admission -------------------------------------------------------------------------

# The samples' gold patch: src/r/a.py `x = 1` -> `x = 2`.
SAMPLE_BASE = {"src/r/a.py": b"x = 1\n"}


class FakeVerifier:
    """Grades a patch by the text it gives src/r/a.py."""

    def __init__(self, by_line: dict[str, VerifyResult]) -> None:
        self.by_line = by_line
        self.models: list[str] = []

    def verify(self, task: TaskManifest, patch: str, model: str = "") -> VerifyResult:
        self.models.append(model)
        added = [ln[1:] for ln in patch.splitlines() if ln.startswith("+") and "+++" not in ln]
        return self.by_line[added[-1]]


def _admitter(tmp_path: Path, by_line: dict[str, VerifyResult], **ts: object) -> Admitter:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(json.dumps({"admit": {"test_strength": ts}}))
    admitter = Admitter(load_config(cfg))
    fake = FakeVerifier(by_line)
    admitter.mutant_verifier = lambda _seconds: fake  # type: ignore[method-assign,assignment,return-value]
    admitter.base_view = lambda _cand: SimpleNamespace(read=SAMPLE_BASE.get)  # type: ignore[method-assign,assignment,return-value]
    return admitter


def _sample_mutants(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(new: str) -> Mutant:
        return Mutant(new, "src/r/a.py", 1, "constant", f"2 -> {new}", f"{new}\n", "")

    monkeypatch.setattr(mutation, "changed_lines", lambda _p: {"src/r/a.py": {1}})
    monkeypatch.setattr(
        mutation,
        "generate",
        lambda *_a, **_k: [make("x = 3"), make("x = 0"), make("x = -2"), make("x = 20")],
    )


KILL = _result("unresolved", 0.0, fix="failed")
PASS = _result("resolved", 1.0, fix="passed")
VERDICTS = {"x = 3": PASS, "x = 0": KILL, "x = -2": KILL, "x = 20": PASS}  # score 0.5


def _run(admitter: Admitter) -> TaskManifest | Rejection:
    cand = Candidate.from_dict(samples.candidate())
    manifest = TaskManifest.from_dict(samples.task())
    eco = SimpleNamespace(name="python")
    timings: dict[str, float] = {}
    out, timings = admitter._test_strength(cand, manifest, eco, timings)
    # Timed when it ran.
    assert ("test_strength" in timings) == admitter.config.admit.test_strength.enabled
    return out


def test_admission_records_the_score_and_rejects_only_above_a_min_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sample_mutants(monkeypatch)
    # The default measures and records, never rejects.
    admitter = _admitter(tmp_path, VERDICTS)
    out = _run(admitter)
    assert isinstance(out, TaskManifest)
    block = out.audit["test_strength"]
    assert (block["killed"], block["survived"], block["score"]) == (2, 2, 0.5)
    assert [s["id"] for s in block["survivors"]] == ["x = 3", "x = 20"]
    assert out.test_strength() == 0.5
    # Every mutant was graded by the admitter's mutant verifier.
    assert admitter.mutant_verifier(None).models == [  # type: ignore[attr-defined]
        "mutant:x = 3",
        "mutant:x = 0",
        "mutant:x = -2",
        "mutant:x = 20",
    ]
    assert isinstance(_run(_admitter(tmp_path, VERDICTS, min_score=0.5)), TaskManifest)
    weak = _run(_admitter(tmp_path, VERDICTS, min_score=0.6))
    assert isinstance(weak, Rejection) and weak.reason == "weak_tests"
    assert weak.extra["test_strength"]["score"] == 0.5
    assert "2 of 4" in weak.detail


def test_admission_never_rejects_an_unmeasured_task_and_can_be_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sample_mutants(monkeypatch)
    invalid = dict.fromkeys(VERDICTS, _result("timeout"))
    out = _run(_admitter(tmp_path, invalid, min_score=0.9))
    assert isinstance(out, TaskManifest)
    assert out.audit["test_strength"]["invalid"] == 4 and out.test_strength() is None
    off = _run(_admitter(tmp_path, VERDICTS, enabled=False, min_score=0.9))
    assert isinstance(off, TaskManifest) and "test_strength" not in off.audit


# -- configuration ------------------------------------------------------------------------


def test_config_defaults_and_digest(tmp_path: Path) -> None:
    ts = load_config().admit.test_strength
    assert (ts.enabled, ts.max_mutants, ts.seconds, ts.seed, ts.min_score) == (
        True,
        8,
        600.0,
        0,
        0.0,
    )
    cfg = tmp_path / "c.yaml"
    cfg.write_text("admit:\n  test_strength:\n    min_score: 0.5\n")
    assert load_config(cfg).admit.test_strength.min_score == 0.5
    # Settings that change what is admitted change the digest.
    assert load_config(cfg).digest() != load_config().digest()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("max_mutants: 0", "max_mutants must be >= 1"),
        ("seconds: 0", "seconds must be > 0"),
        ("seed: -1", "seed must be >= 0"),
        ("min_score: -0.1", "min_score must be >= 0"),
        ("min_score: 1.5", "min_score must be <= 1"),
        ("max_mutant: 3", "did you mean 'max_mutants'"),
    ],
)
def test_config_refuses_out_of_range(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"admit:\n  test_strength:\n    {text}\n")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert message in f"{err.value} {err.value.hint}"


# -- exports and the report ---------------------------------------------------------------


def _task(score: float | None, survived: int = 0, **changes: Any) -> TaskManifest:
    data = samples.task(**changes)
    if score is not None or survived:
        data["audit"]["test_strength"] = {"score": score, "survived": survived}
    return TaskManifest.from_dict(data)


def test_swebench_rows_carry_the_score() -> None:
    assert swebench_row(_task(0.75, 1))["test_strength"] == 0.75
    assert swebench_row(_task(None))["test_strength"] is None


def test_parquet_has_a_test_strength_column_whatever_the_rows_hold(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    from swe_forge.parquet import arrow_schema, read_parquet, write_parquet

    measured = [_task(0.5, 2), _task(1.0, instance_id="o__r-8")]
    unmeasured = [_task(None)]
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    write_parquet(a, measured)
    write_parquet(b, unmeasured)
    # The same columns in both shards, the score among them.
    assert pq.read_schema(a) == pq.read_schema(b) == arrow_schema("task")
    assert pq.read_table(a).column("test_strength").to_pylist() == [0.5, 1.0]
    assert pq.read_table(b).column("test_strength").to_pylist() == [None]
    # The records read back unchanged (the column is derived, not a field).
    assert read_parquet(a) == measured
    # A file written before the column existed still reads.
    old = tmp_path / "old.parquet"
    table = pq.read_table(a).drop_columns(["test_strength"])
    pq.write_table(table, old)
    assert read_parquet(old) == measured


def test_report_shows_the_distribution_of_scores(tmp_path: Path) -> None:
    tasks = [
        _task(1.0, instance_id="t-1"),
        _task(0.8, 1, instance_id="t-2"),
        _task(0.5, 3, instance_id="t-3"),
        _task(0.2, 4, instance_id="t-4"),
        _task(None, instance_id="t-5"),
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(t.to_json() + "\n" for t in tasks))
    data = funnel([path])["test_strength"]
    assert data == {
        "scores": {"1.0": 1, "[0.5,1)": 2, "<0.5": 1, "unmeasured": 1},
        "with_survivors": 3,
    }
    assert strength_line(data) == (
        "test strength of admitted tasks: 1.0: 1, [0.5,1): 2, <0.5: 1, unmeasured: 1; "
        ">=1 survivor: 3"
    )


def test_mutants_are_graded_without_decoys_by_the_same_judge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A mutant is made here and cannot recognise the held-out tests: the honest run decides
    # it; and a mutant may loop forever, so its time limit follows the gold patch's
    # verification, not the verifier's limit for an agent's patch. The rest is the judge's.
    from swe_forge.admission import admitter as admitter_module
    from swe_forge.admission.strength import mutant_settings

    made: list[Any] = []

    class Judge:
        def __init__(self, engine: Any, classifier: Any, settings: Any, **_kw: Any) -> None:
            self.settings = settings
            made.append(self)

    monkeypatch.setattr(admitter_module, "Verifier", Judge)
    admitter = Admitter(load_config())
    monkeypatch.setattr(Admitter, "engine", None)
    gold = admitter.verify_settings
    plain = admitter.mutant_verifier(None).settings
    assert gold.decoys > 0 and plain.decoys == 0
    assert replace(plain, decoys=gold.decoys) == gold
    quick = admitter.mutant_verifier(5.0).settings
    assert quick.timeout_seconds == 80 and quick.test_timeout_seconds == 80
    assert mutant_settings(gold, 100.0).timeout_seconds == 460
    assert mutant_settings(gold, 1e6).timeout_seconds == gold.timeout_seconds
    assert admitter.mutant_verifier(5.0) is admitter.mutant_verifier(5.0) and len(made) == 2


class ImageFiles:
    """An engine whose instance images keep SAMPLE_BASE in /testbed/.git only (as ours do:
    the files are written from it when a container starts)."""

    def __init__(self, tmp: Path) -> None:
        self.copied: list[tuple[str, str]] = []
        self.tree = tmp / "testbed"
        self.tree.mkdir()
        for rel, data in SAMPLE_BASE.items():
            (self.tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.tree / rel).write_bytes(data)
        git = ["git", "-C", str(self.tree), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "scrubbed base"], check=True)

    def copy_out(self, image: str, path: str, dest: Path) -> None:
        import shutil

        self.copied.append((image, path))
        assert path == "/testbed/.git"
        shutil.copytree(self.tree / ".git", dest / ".git")


def test_audit_tests_scores_admitted_tasks_from_their_images(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No repository, no admission: the base files come from the task's image, each mutant
    # is graded by a verifier without decoys, and every task is written again, in order,
    # with its score (an --instance filter keeps only the tasks asked for).
    from swe_forge.commands import audit_tests, verify

    _sample_mutants(monkeypatch)
    graders: list[Any] = []

    class Judge(FakeVerifier):
        def __init__(self, engine: Any, classifier: Any, settings: Any) -> None:
            super().__init__(VERDICTS)
            self.settings = settings
            graders.append(self)

        def ecosystem_of(self, task: TaskManifest) -> Any:
            return SimpleNamespace(name="python")

    monkeypatch.setattr(audit_tests, "Verifier", Judge)
    monkeypatch.setattr(verify, "provide_tasks", lambda *_a: None)
    rows = []
    for n in (1, 2, 3):
        data = samples.task()
        data["instance_id"] = f"o__r-{n}"
        data["patch"] = (
            "diff --git a/src/r/a.py b/src/r/a.py\n--- a/src/r/a.py\n+++ b/src/r/a.py\n"
            "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        )
        rows.append(json.dumps(data))
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(rows) + "\n")
    out = tmp_path / "scored.jsonl"
    engine = ImageFiles(tmp_path)
    run = audit_tests.run_audit_tests(
        tasks,
        out,
        config=load_config(),
        instances=["o__r-3", "o__r-1"],
        engine=engine,  # type: ignore[arg-type]
    )
    written = [TaskManifest.from_dict(json.loads(x)) for x in out.read_text().splitlines()]
    assert [t.instance_id for t in written] == ["o__r-1", "o__r-3"]
    assert [t.test_strength() for t in written] == [0.5, 0.5]
    assert written[0].audit["test_strength"]["survivors"][0]["id"] == "x = 3"
    assert run.summary()["scores"] == {"1.0": 0, "[0.5,1)": 2, "<0.5": 0}
    assert run.with_survivors == 2 and run.measured == 2
    assert all(g.settings.decoys == 0 for g in graders)
    assert sum(len(g.models) for g in graders) == 8
    assert {p for _i, p in engine.copied} == {"/testbed/.git"}
    with pytest.raises(Exception, match="not in"):
        audit_tests.run_audit_tests(
            tasks,
            tmp_path / "x.jsonl",
            config=load_config(),
            instances=["o__r-9"],
            engine=engine,  # type: ignore[arg-type]
        )


@pytest.mark.parametrize(
    ("path", "outside"),
    [
        ("benchmark/parse.js", True),
        ("src/stringify-cookie.bench.ts", True),
        ("benches/throughput.rs", True),
        ("examples/demo.py", True),
        ("docs/conf.py", True),
        ("scripts/release.py", True),
        ("src/index.js", False),
        ("src/textkit/wrap.py", False),
        ("pkg/tools/parse.go", False),
        ("src/benchmarks_helper/x.py", False),
    ],
)
def test_benchmarks_examples_and_docs_are_not_mutated(path: str, outside: bool) -> None:
    from swe_forge.admission.strength import outside_library

    assert outside_library(path) is outside


def test_a_gold_patch_that_also_edits_a_benchmark_mutates_only_the_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # jshttp/cookie: a mutant in a benchmark suite survives whatever the tests are (9 of 12
    # survivors there): it says nothing about them, and the budget goes to the library.
    seen: dict[str, Any] = {}

    def generate(language: str, files: Any, lines: Any, **_kw: Any) -> list[Mutant]:
        seen["files"] = sorted(files)
        return []

    monkeypatch.setattr(mutation, "generate", generate)
    patch = "".join(
        f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        for p in ("benchmark/parse.js", "src/index.js")
    )
    record = measure(
        language="js",
        gold_patch=patch,
        base_read=lambda _p: b"x = 1\n",
        grade=lambda *_a: _result("resolved", 1.0),
        settings=StrengthSettings(),
    )
    assert seen["files"] == ["src/index.js"]
    assert record.to_dict()["skipped"] == ["benchmark/parse.js"]
