"""Structured test reports and canary tests of runners other than pytest (the supervisor's).

Standalone on purpose, like the supervisor: stdlib only, Python 3.9+, no imports from
swe-forge. The supervisor captures the runner's structured stream (never a file the code under
test could write before or after) and hands it here; what comes back has the shape of the
pytest harness's events, so the host judges every ecosystem the same way:

``{"connected", "ended", "exitstatus", "tests": {id: outcome}, "collect_errors": [...],
"messages": {...}, "tamper": [...], "forged": 0}``

- ``go-test-json``: ``go test -json`` (test2json). Test ids are ``<package dir>::<Test>``.
  A package that fails without reporting a test did not build (a collection error). A test
  reported twice is tamper evidence (a forged frame beside the real one).
"""

import json
import os
import re

OUTCOMES = {"pass": "passed", "fail": "failed", "skip": "skipped"}
MAX_TESTS = 200000
MAX_MESSAGES = 2000


def _events():
    return {
        "connected": False,
        "ended": False,
        "exitstatus": None,
        "testsfailed": None,
        "reported": None,
        "collected": None,
        "tests": {},
        "collect_errors": [],
        "messages": {},
        "tamper": [],
        "forged": 0,
        "bytes": 0,
    }


def _rel_package(package, module):
    if package == module:
        return "."
    if module and package.startswith(module + "/"):
        return package[len(module) + 1 :]
    return package


def parse_go_test_json(data, spec):
    """Events from ``go test -json`` output bytes."""
    ev = _events()
    ev["bytes"] = len(data)
    module = spec.get("module") or ""
    expected = set(spec.get("packages") or ())
    results = {}
    output = {}
    for raw in data.split(b"\n"):
        raw = raw.strip()
        if not raw.startswith(b"{"):
            continue
        try:
            item = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        action, package, test = item.get("Action"), item.get("Package"), item.get("Test")
        if not isinstance(action, str) or not isinstance(package, str):
            continue
        ev["connected"] = True
        rel = _rel_package(package, module)
        if isinstance(test, str) and test:
            key = rel + "::" + test
            if action == "output" and isinstance(item.get("Output"), str):
                kept = output.setdefault(key, [])
                if sum(len(x) for x in kept) < 4000:
                    kept.append(item["Output"])
            elif action in OUTCOMES:
                if key in ev["tests"]:
                    if len(ev["tamper"]) < 50:
                        ev["tamper"].append(key[:200] + " was reported twice")
                    continue
                if len(ev["tests"]) < MAX_TESTS:
                    ev["tests"][key] = OUTCOMES[action]
                if action == "fail" and len(ev["messages"]) < MAX_MESSAGES:
                    lines = [
                        ln.strip()
                        for ln in "".join(output.get(key, [])).splitlines()
                        if ln.strip() and not ln.strip().startswith(("=== ", "--- "))
                    ]
                    if lines:
                        ev["messages"][key] = "\n".join(lines[:8])[:1000]
        elif action in OUTCOMES:
            results[rel] = action
            if action == "fail":
                text = "".join(output.get(rel + "::", []))
                if text:
                    ev["messages"].setdefault(rel, text[-1000:])
        elif action == "output" and isinstance(item.get("Output"), str):
            kept = output.setdefault(rel + "::", [])
            if sum(len(x) for x in kept) < 4000:
                kept.append(item["Output"])
    for rel, result in sorted(results.items()):
        prefix = rel + "::"
        if result == "fail" and not any(k.startswith(prefix) for k in ev["tests"]):
            ev["collect_errors"].append(rel)
    missing = sorted(p for p in expected if p not in results)
    for rel in missing:
        ev["collect_errors"].append(rel)
    ev["ended"] = ev["connected"] and not missing
    failed = any(v == "failed" for v in ev["tests"].values()) or any(
        r == "fail" for r in results.values()
    )
    ev["exitstatus"] = 1 if failed or missing else 0
    ev["reported"] = len(ev["tests"])
    return ev


PARSERS = {"go-test-json": parse_go_test_json}


def parse(spec, data):
    """Events from a runner's structured output (``spec["format"]`` names the parser)."""
    parser = PARSERS.get(spec.get("format"))
    if parser is None:
        ev = _events()
        ev["tamper"].append("unknown report format")
        return ev
    return parser(data, spec)


# ------------------------------------------------------------------------------- canaries

_GO_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)


def go_canary(testbed, path, name):
    """A Go test file that must fail: the package clause of a test file beside it."""
    directory = os.path.dirname(os.path.join(testbed, path))
    package = ""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    for entry in names:
        if not entry.endswith("_test.go"):
            continue
        try:
            with open(os.path.join(directory, entry), "rb") as fh:
                m = _GO_PACKAGE.search(fh.read(65536).decode("utf-8", "replace"))
        except OSError:
            continue
        if m:
            package = m.group(1)
            break
    if not package:
        return None
    return (
        f'package {package}\n\nimport "testing"\n\n'
        f"func {name}(t *testing.T) {{\n"
        f'\tgot, want := len("{name.lower()}"), {len(name) + 7}\n'
        f'\tif got != want {{\n\t\tt.Fatalf("got %d, want %d", got, want)\n\t}}\n}}\n'
    )


TEMPLATES = {"go": go_canary}


def write_extra_files(testbed, files, safe_rel):
    """Write canary test files (root-owned, world-readable); return paths written."""
    written = []
    for item in files or ():
        path, template = item.get("path", ""), item.get("template", "")
        if not safe_rel(path) or template not in TEMPLATES:
            continue
        content = TEMPLATES[template](testbed, path, item.get("name", ""))
        if content is None:
            continue
        full = os.path.join(testbed, path)
        if os.path.lexists(full) or not os.path.isdir(os.path.dirname(full)):
            continue
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(content)
        os.chown(full, 0, 0)
        os.chmod(full, 0o444)
        written.append(path)
    return written


# ------------------------------------------------------------------------ Maven Surefire
#
# Surefire writes one XML report per test class (TEST-<class>.xml) from the Maven process, in
# a directory the code under test (same uid) can also write. So the reports are read only
# after the run, from directories the supervisor emptied right before it (nothing planted by a
# patch survives), and each report is checked against Maven's own console: for every class it
# ran, Maven prints one "Tests run: N, Failures: F, Errors: E, Skipped: S ... -- in <class>"
# line, which the test JVM cannot remove (its stdout is surefire's event channel and test
# output goes to files). A report that disagrees with its class's line, a class reported
# twice (in two files or two lines), or a report of a class Maven never named is tamper
# evidence. Test ids are ``<class FQN>::<method>``.

_SF_LINE = re.compile(
    r"^\[(?:INFO|WARNING|ERROR)\] Tests run: (\d+), Failures: (\d+), Errors: (\d+), "
    r"Skipped: (\d+), Time elapsed: [^\n]*? -- in (\S+)\s*$",
    re.M,
)
_SF_END = re.compile(r"^\[(?:INFO|ERROR)\] BUILD (SUCCESS|FAILURE)\s*$", re.M)
MAX_REPORT_BYTES = 32 << 20
MAX_REPORT_FILES = 5000


def fresh_report_dirs(testbed, dirs, uid, gid, safe_rel):
    """Empty (or create) the report directories of a run, owned by the tests' user, so that
    nothing a patch planted there is read afterwards. Returns the directories made."""
    import shutil

    made = []
    for rel in dirs or ():
        if not safe_rel(rel):
            continue
        full = os.path.join(testbed, rel)
        parent = testbed
        ok = True
        for part in rel.split("/")[:-1]:
            parent = os.path.join(parent, part)
            if os.path.islink(parent) or (os.path.lexists(parent) and not os.path.isdir(parent)):
                ok = False
                break
        if not ok:
            continue
        if os.path.islink(full) or (os.path.lexists(full) and not os.path.isdir(full)):
            os.unlink(full)
        elif os.path.isdir(full):
            shutil.rmtree(full)
        os.makedirs(full)
        p = full
        while p != testbed and len(p) > len(testbed):
            try:
                st = os.lstat(p)
                if st.st_uid == 0:
                    os.chown(p, uid, gid)
            except OSError:
                pass
            p = os.path.dirname(p)
        made.append(rel)
    return made


def read_report_dirs(testbed, dirs):
    """{relative path: bytes} of the regular files (no links) of report directories."""
    out = {}
    total = 0
    for rel in dirs or ():
        full = os.path.join(testbed, rel)
        try:
            if os.path.islink(full) or not os.path.isdir(full):
                continue
            names = sorted(os.listdir(full))
        except OSError:
            continue
        for name in names:
            if not (name.startswith("TEST-") and name.endswith(".xml")):
                continue
            if len(out) >= MAX_REPORT_FILES or total > MAX_REPORT_BYTES:
                break
            path = os.path.join(full, name)
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except OSError:
                continue
            try:
                import stat as _stat

                if not _stat.S_ISREG(os.fstat(fd).st_mode):
                    continue
                chunks = []
                while True:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    total += len(chunk)
                    if total > MAX_REPORT_BYTES:
                        break
                out[rel + "/" + name] = b"".join(chunks)
            finally:
                os.close(fd)
    return out


def _sf_outcome(case):
    tags = {child.tag for child in case}
    if "failure" in tags or "error" in tags:
        return "failed"
    if "skipped" in tags:
        return "skipped"
    return "passed"


def _sf_message(case):
    for child in case:
        if child.tag in ("failure", "error"):
            text = child.get("message") or (child.text or "")
            kind = child.get("type") or child.tag
            return (kind + ": " + text.strip())[:1000]
    return ""


def parse_surefire(data, spec):
    """Events from Surefire's XML reports (``spec["files"]``, read by the supervisor after the
    run) checked against Maven's console output (``data``, the runner's stdout)."""
    import xml.etree.ElementTree as ET

    ev = _events()
    ev["bytes"] = len(data)
    text = data.decode("utf-8", "replace")
    lines = {}
    for m in _SF_LINE.finditer(text):
        cls = m.group(5)
        counts = tuple(int(m.group(i)) for i in range(1, 5))
        if cls in lines:
            ev["tamper"].append(cls[:200] + " was reported twice by Maven")
            continue
        lines[cls] = counts
    ends = _SF_END.findall(text)
    if len(ends) > 1:
        ev["tamper"].append("Maven ended its build more than once")
    classes = spec.get("classes") or {}  # class FQN -> test file (what must be reported)
    seen = {}
    for name, raw in sorted((spec.get("files") or {}).items()):
        if b"<!DOCTYPE" in raw[:4096] or b"<!ENTITY" in raw:
            ev["tamper"].append(name[:200] + ": a report with a document type")
            continue
        try:
            root = ET.fromstring(raw)
        except ET.ParseError:
            ev["tamper"].append(name[:200] + ": a report that is not XML")
            continue
        suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
        for suite in suites:
            suite_name = suite.get("name") or ""
            if suite_name in seen:
                ev["tamper"].append(suite_name[:200] + " was reported twice")
                continue
            counts = [0, 0, 0, 0]
            for case in suite.iter("testcase"):
                cls = case.get("classname") or suite_name
                key = cls + "::" + (case.get("name") or "")
                outcome = _sf_outcome(case)
                tags = {child.tag for child in case}
                counts[0] += 1
                counts[1] += "failure" in tags
                counts[2] += "error" in tags and "failure" not in tags
                counts[3] += outcome == "skipped"
                ev["connected"] = True
                if key in ev["tests"]:
                    if len(ev["tamper"]) < 50:
                        ev["tamper"].append(key[:200] + " was reported twice")
                    continue
                if len(ev["tests"]) < MAX_TESTS:
                    ev["tests"][key] = outcome
                if outcome == "failed" and len(ev["messages"]) < MAX_MESSAGES:
                    msg = _sf_message(case)
                    if msg:
                        ev["messages"][key] = msg
            seen[suite_name] = tuple(counts)
    for cls, counts in sorted(seen.items()):
        told = lines.get(cls)
        if told is None:
            ev["tamper"].append(cls[:200] + ": a report of a class Maven did not run")
        elif told != counts:
            ev["tamper"].append(f"{cls[:200]}: the report counts {counts} but Maven counted {told}")
    for cls in sorted(set(lines) - set(seen)):
        ev["tamper"].append(cls[:200] + ": Maven ran it but its report is missing")
    # A test class that never ran (it did not compile, or the build stopped before it) is a
    # collection error of its test file.
    ran = set(seen) | set(lines)
    for cls, path in sorted(classes.items()):
        if cls not in ran and path not in ev["collect_errors"]:
            ev["collect_errors"].append(path)
    if ev["collect_errors"] and len(ev["messages"]) < MAX_MESSAGES:
        errs = [ln for ln in text.splitlines() if ln.startswith("[ERROR]") and ".java:" in ln]
        if errs:
            for path in ev["collect_errors"]:
                ev["messages"].setdefault(path, "\n".join(errs[:8])[:1000])
    ev["ended"] = len(ends) == 1
    ev["connected"] = ev["connected"] or bool(ends)
    failed = any(v == "failed" for v in ev["tests"].values())
    ev["exitstatus"] = 1 if failed or ev["collect_errors"] or ends != ["SUCCESS"] else 0
    ev["reported"] = len(ev["tests"])
    return ev


PARSERS["surefire-xml"] = parse_surefire

_JAVA_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)


def java_canary(testbed, path, name):
    """A JUnit test class that must fail, in the package and framework (JUnit 4 or 5) of a
    test class beside it. ``name`` is ``Class#method``."""
    directory = os.path.dirname(os.path.join(testbed, path))
    cls, _, method = name.partition("#")
    if not cls or not method or not path.endswith("/" + cls + ".java"):
        return None
    package, jupiter = None, None
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    for entry in names:
        if not entry.endswith(".java"):
            continue
        try:
            with open(os.path.join(directory, entry), "rb") as fh:
                source = fh.read(131072).decode("utf-8", "replace")
        except OSError:
            continue
        if "org.junit.jupiter" in source:
            found = True
        elif "org.junit.Test" in source or "org.junit.*" in source:
            found = False
        else:
            continue
        m = _JAVA_PACKAGE.search(source)
        package, jupiter = (m.group(1) if m else ""), found
        break
    if jupiter is None:
        return None
    head = f"package {package};\n\n" if package else ""
    want = len(method) + 7
    if jupiter:
        return (
            head
            + "import org.junit.jupiter.api.Assertions;\nimport org.junit.jupiter.api.Test;\n\n"
            f"class {cls} {{\n    @Test\n    void {method}() {{\n"
            f'        Assertions.assertEquals({want}, "{method.lower()}".length());\n    }}\n}}\n'
        )
    return (
        head + "import org.junit.Assert;\nimport org.junit.Test;\n\n"
        f"public class {cls} {{\n    @Test\n    public void {method}() {{\n"
        f'        Assert.assertEquals({want}, "{method.lower()}".length());\n    }}\n}}\n'
    )


TEMPLATES["java"] = java_canary
