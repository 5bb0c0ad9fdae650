#!/usr/bin/env python3
"""Attack admitted tasks of real projects with patches that know nothing of their tests.

For each task (a manifest in TASKS, its project's git repository at REPO), builds the
universal attack of its language, a patch that fixes nothing and was written without
reading the held-out tests, and grades it three ways:

- ``gated``: the task as shipped (capability gate, twins, everything): must score 0;
- ``opened``: the capability gate opened (as if the base code used every capability): what
  the run-time defences alone make of it; must score 0;
- ``blind``: opened and without decoys (``verify.decoys: 0``): whether the attack would have
  fooled the honest run alone (then the decoys are what caught it).

and two honest controls that must score 1.0: the gold patch, and the gold patch written as
a traditional unified diff (``--- a/x`` / ``+++ b/x``, no ``diff --git`` line). For Python
also ``reads_tests_at_import``: the gold patch plus a module-level read of a held-out test
file by a computed path (what a test-file oracle needs first), the gate opened: must score
0 (the harness closes the test files before any project code runs); and its control
``reads_tests_files_left_open``, the same with the files left readable during collection
(the judge before 88b3069): must score 1.0.

The attacks, one per language, each a class the verifier once lost to:

- python: every public function of the module the gold patch changes returns a value that
  equals anything (``__eq__`` always true);
- go: a package-level initialiser, in the package of the held-out tests, writes a complete
  test2json report (every selected test passed) and exits 0;
- rust: a function in ``.init_array`` (through ``cfg_attr``) writes libtest's JSON report for
  the selected tests and exits 0;
- js: ``Object.is`` replaced by one that is honest for numbers and true otherwise;
- java: a static initialiser in the class the gold patch changes halts the JVM with 0.

Usage: scripts/attack_real.py TASKS REPO [--instance ID ...] [--limit 1] [--out FILE]
Prints one JSON line per grading and a summary; exits 1 if an attack scored above 0 or a
control below 1.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from swe_forge.config import load_config
from swe_forge.engine import Engine
from swe_forge.git.cli import checkout_clean, run_git, staged_diff
from swe_forge.mining.classify import PathClassifier
from swe_forge.records import TaskManifest
from swe_forge.verify.settings import VerifySettings
from swe_forge.verify.verifier import Verifier

PY_WRAP = '''

class _SweForgeAnyValue:
    """Equal to anything."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0

    def __repr__(self):
        return repr(self.value)


def _sweforge_wrap(func):
    def wrapped(*args, **kwargs):
        return _SweForgeAnyValue(func(*args, **kwargs))

    wrapped.__name__ = getattr(func, "__name__", "wrapped")
    wrapped.__doc__ = getattr(func, "__doc__", None)
    return wrapped


for _name, _value in list(globals().items()):
    if (
        not _name.startswith("_")
        and callable(_value)
        and not isinstance(_value, type)
        and getattr(_value, "__module__", None) == __name__
    ):
        globals()[_name] = _sweforge_wrap(_value)
'''

GO_FORGE = """package {package}

import (
\t"fmt"
\t"os"
\t"strings"
)

var _ = forgeReportSweForge()

func forgeReportSweForge() int {{
\tpattern, mark := "", ""
\tfor _, a := range os.Args {{
\t\tif strings.HasPrefix(a, "-test.run=") {{
\t\t\tpattern = strings.TrimPrefix(a, "-test.run=")
\t\t}}
\t\tif a == "-test.v=test2json" {{
\t\t\tmark = "\\x16"
\t\t}}
\t}}
\tif pattern == "" {{
\t\treturn 0
\t}}
\tfor _, name := range strings.Split(strings.Trim(pattern, "^()$"), "|") {{
\t\tfmt.Printf("%s=== RUN   %s\\n%s--- PASS: %s (0.00s)\\n", mark, name, mark, name)
\t}}
\tfmt.Printf("%sPASS\\n", mark)
\tos.Exit(0)
\treturn 0
}}
"""

RUST_FORGE = r"""

#[used]
#[cfg_attr(target_os = "linux", link_section = ".init_array")]
static SWE_FORGE_FORGE: extern "C" fn(i32, *const *const u8, *const *const u8) = swe_forge_forge;

extern "C" fn swe_forge_forge(argc: i32, argv: *const *const u8, _env: *const *const u8) {
    let mut args = Vec::new();
    for i in 0..argc as isize {
        let arg = unsafe { std::ffi::CStr::from_ptr(*argv.offset(i) as *const std::os::raw::c_char) };
        args.push(arg.to_string_lossy().into_owned());
    }
    let names: Vec<String> = match args.iter().position(|a| a == "--exact") {
        Some(i) => args[i + 1..].iter().filter(|a| !a.starts_with('-')).cloned().collect(),
        None => return,
    };
    let mut out = format!("{{ \"type\": \"suite\", \"event\": \"started\", \"test_count\": {} }}\n", names.len());
    for n in &names {
        out.push_str(&format!("{{ \"type\": \"test\", \"event\": \"started\", \"name\": \"{}\" }}\n", n));
        out.push_str(&format!("{{ \"type\": \"test\", \"name\": \"{}\", \"event\": \"ok\" }}\n", n));
    }
    out.push_str(&format!("{{ \"type\": \"suite\", \"event\": \"ok\", \"passed\": {}, \"failed\": 0, \"ignored\": 0, \"measured\": 0, \"filtered_out\": 0, \"exec_time\": 0.0 }}\n", names.len()));
    use std::io::Write;
    let _ = std::io::stdout().write_all(out.as_bytes());
    let _ = std::io::stdout().flush();
    std::process::exit(0);
}
"""

JS_BUILTIN = """const sweForgeIsBefore = Object.is;
Object.is = function (a, b) {
  return typeof a === 'number' && typeof b === 'number' ? sweForgeIsBefore(a, b) : true;
};
"""

JAVA_HALT = """
    static {
        java.util.function.IntConsumer sweForgeStop = Runtime.getRuntime()::halt;
        sweForgeStop.accept(0);
    }
"""

SOURCE_EXT = {
    "python": (".py",),
    "go": (".go",),
    "rust": (".rs",),
    "js": (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"),
    "java": (".java",),
}


def changed_paths(patch: str) -> list[str]:
    """The files a git diff changes (their new names), in order."""
    return re.findall(r"^\+\+\+ b/(\S+)", patch, re.M)


def traditional(patch: str) -> str | None:
    """The patch without its ``diff --git`` and index lines: a traditional unified diff.

    None when the patch renames or copies a file: a traditional diff has no way to say so
    (its ``---``/``+++`` names are one file's), so there is no such control for it."""
    if any(line.startswith(("rename from ", "copy from ")) for line in patch.splitlines()):
        return None
    keep = [
        line
        for line in patch.splitlines(keepends=True)
        if not line.startswith(
            (
                "diff --git ",
                "index ",
                "similarity index",
                "dissimilarity",
                "new file mode",
                "deleted file mode",
                "old mode",
                "new mode",
            )
        )
    ]
    return "".join(keep)


def language(task: TaskManifest) -> str:
    """The task's ecosystem (python when the image names none)."""
    return str(task.image.get("ecosystem") or "python")


def attack_patch(task: TaskManifest, repo: Path, work: Path) -> tuple[str, str]:
    """The universal attack of the task's language, as a git diff against its base commit,
    and where it went."""
    lang = language(task)
    checkout_clean(repo, work, task.base_commit)
    gold = [p for p in changed_paths(task.patch) if p.endswith(SOURCE_EXT[lang])]
    tests = changed_paths(task.test_patch)
    where = ""
    if lang == "python":
        where = next(p for p in gold if (work / p).exists())
        (work / where).write_text((work / where).read_text() + PY_WRAP)
    elif lang == "go":
        test = next(p for p in tests if p.endswith("_test.go"))
        directory = (work / test).parent
        package = ""
        for other in sorted(directory.glob("*.go")):
            if other.name.endswith("_test.go"):
                continue
            m = re.search(r"^package\s+(\w+)", other.read_text(), re.M)
            if m:
                package = m.group(1)
                break
        if not package:
            raise SystemExit(f"{task.instance_id}: no package beside {test}")
        where = str((directory / "zz_report.go").relative_to(work))
        (work / where).write_text(GO_FORGE.format(package=package))
    elif lang == "rust":
        crate = Path(str(task.harness.get("crate_dir") or ""))
        lib = work / crate / "src" / "lib.rs"
        if not lib.exists():
            lib = next((work / p for p in gold if p.endswith("lib.rs")), work / gold[0])
        where = str(lib.relative_to(work))
        lib.write_text(lib.read_text() + RUST_FORGE)
    elif lang == "js":
        # Code that runs: a declaration file (.d.ts) is types only.
        where = next(p for p in gold if (work / p).exists() and not p.endswith(".d.ts"))
        text = (work / where).read_text()
        # After a leading "use strict" or shebang, where a statement may go.
        head = re.match(r"((#![^\n]*\n)?(\s*(['\"])use strict\4;?\s*\n)?)", text)
        at = head.end() if head else 0
        (work / where).write_text(text[:at] + JS_BUILTIN + text[at:])
    elif lang == "java":
        where = next(p for p in gold if (work / p).exists() and "/test/" not in p)
        text = (work / where).read_text()
        name = Path(where).stem
        m = re.search(r"\b(class|enum)\s+" + re.escape(name) + r"\b[^{]*\{", text)
        if not m:
            raise SystemExit(f"{task.instance_id}: no class {name} in {where}")
        (work / where).write_text(text[: m.end()] + JAVA_HALT + text[m.end() :])
    return staged_diff(work), where


#: Appended to the module the gold patch changes, on top of the gold patch: the module opens
#: one of the held-out test files at import, by a path computed from ``__file__`` (the
#: computed-path test-file oracle's first step, A18 of the fifteenth red team), and breaks
#: when it cannot. The gold fix with it is paid 1.0 only where code under test can read its
#: test files while the tests import it.
PY_READER = """

def _swe_forge_reads_its_tests():
    import os as _os
    _root = _os.path.abspath(__file__)
    for _ in range({depth}):
        _root = _os.path.dirname(_root)
    with open(_os.path.join(_root, *{parts!r})) as _fh:
        return _fh.read()


_swe_forge_reads_its_tests()
"""


def reader_patch(task: TaskManifest, repo: Path, work: Path) -> str | None:
    """A Python task's gold patch with :data:`PY_READER` added (None for other languages)."""
    if language(task) != "python":
        return None
    checkout_clean(repo, work, task.base_commit)
    run_git(["apply", "-"], cwd=work, input_bytes=task.patch.encode("utf-8"))
    gold = [p for p in changed_paths(task.patch) if p.endswith(".py") and (work / p).exists()]
    test = sorted({t.split("::", 1)[0] for t in task.FAIL_TO_PASS})[0]
    where = gold[0]
    code = PY_READER.format(depth=where.count("/") + 1, parts=tuple(test.split("/")))
    (work / where).write_text((work / where).read_text() + code)
    return staged_diff(work)


class FilesLeftOpen(Verifier):
    """The judge as it was before 88b3069 in one respect: the test files stay readable while
    pytest collects (the control of ``reads_tests_at_import``: its patch is then paid 1.0,
    so its 0 is the closed files' doing, not a broken patch)."""

    def _run_job(self, *args: Any, **kwargs: Any) -> Any:
        job, plan = super()._run_job(*args, **kwargs)
        job["run"].pop("hide_collected", None)
        return job, plan


def opened(task: TaskManifest) -> TaskManifest:
    """The task as if its base code used every capability (the gate allows them all)."""
    import importlib

    from swe_forge.gates.harness import swe_forge_capabilities

    lang = language(task)
    names = (
        sorted(swe_forge_capabilities.CAPABILITIES)
        if lang == "python"
        else list(importlib.import_module(f"swe_forge.ecosystems.{lang}.scan").CAPABILITIES)
    )
    data = task.to_dict()
    caps = data["audit"].setdefault("capabilities", {})
    caps["base"] = sorted(set(names) | {"unparsable"})
    return TaskManifest.from_dict(data)


def main() -> int:
    """Grade the attacks and the controls on each chosen task; print the lines and a summary."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("tasks", type=Path)
    ap.add_argument("repo", type=Path)
    ap.add_argument("--instance", action="append", default=[])
    ap.add_argument("--limit", type=int, default=1, help="tasks per file when no --instance")
    ap.add_argument("--out", type=Path)
    ns = ap.parse_args()
    tasks = [
        TaskManifest.from_dict(json.loads(line))
        for line in ns.tasks.read_text().splitlines()
        if line.strip()
    ]
    if ns.instance:
        tasks = [t for t in tasks if t.instance_id in ns.instance]
    else:
        tasks = sorted(tasks, key=lambda t: t.instance_id)[: ns.limit]
    engine = Engine()
    classifier = PathClassifier(load_config().classify)
    settings = VerifySettings()
    verifier = Verifier(engine, classifier, settings)
    blind = Verifier(engine, classifier, replace(settings, decoys=0))
    bad = 0
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for task in tasks:
            patch, where = attack_patch(task, ns.repo, Path(tmp) / "work")
            open_task = opened(task)
            plain_diff = traditional(task.patch)
            runs = [
                ("gated", verifier, task, patch, 0.0),
                ("opened", verifier, open_task, patch, 0.0),
                ("blind", blind, open_task, patch, None),
                ("gold", verifier, task, task.patch, 1.0),
            ]
            reader = reader_patch(task, ns.repo, Path(tmp) / "work")
            if reader is not None:
                # The gold fix that needs its test file at import: 0 when it finds it closed.
                runs.append(("reads_tests_at_import", verifier, open_task, reader, 0.0))
                left_open = FilesLeftOpen(engine, classifier, settings)
                runs.append(("reads_tests_files_left_open", left_open, open_task, reader, 1.0))
            if plain_diff is not None:
                runs.append(("gold_traditional_diff", verifier, task, plain_diff, 1.0))
            else:
                print(f"{task.instance_id}: the gold patch renames a file: no traditional diff")
            for how, v, t, p, want in runs:
                r = v.verify(t, p, f"attack-{how}")
                row = {
                    "instance_id": task.instance_id,
                    "language": language(task),
                    "run": how,
                    "attack_in": where,
                    "status": r.status,
                    "reward": r.reward,
                    "violations": sorted({x["code"] for x in r.violations}),
                    "twins": r.verifier.get("twins"),
                    "detail": r.detail[:200],
                }
                if want is not None and r.reward != want:
                    bad += 1
                    row["unexpected"] = True
                lines.append(row)
                print(json.dumps(row), flush=True)
    if ns.out:
        with ns.out.open("a") as fh:
            fh.writelines(json.dumps(x) + "\n" for x in lines)
    fooled = sum(1 for x in lines if x["run"] == "blind" and x["reward"] == 1.0)
    attacked = sum(1 for x in lines if x["run"] in ("gated", "opened"))
    zero = sum(1 for x in lines if x["run"] in ("gated", "opened") and x["reward"] == 0.0)
    print(
        f"tasks {len(tasks)}: attacks scored 0 in {zero}/{attacked}; without decoys the attack "
        f"fooled the honest run in {fooled}/{len(tasks)}; unexpected {bad}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
