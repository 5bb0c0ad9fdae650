"""Structured test reports of runners other than pytest (the supervisor's).

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


_GO_BUILD_FAILED = re.compile(r"^FAIL\s+(\S+)\s+\[(?:build|setup) failed\]$")


def parse_go_test_json(data, spec):
    """Events from ``go test -json`` output bytes."""
    ev = _events()
    ev["bytes"] = len(data)
    module = spec.get("module") or ""
    expected = set(spec.get("packages") or ())
    results = {}
    output = {}
    started = {}
    for raw in data.split(b"\n"):
        raw = raw.strip()
        if not raw.startswith(b"{"):
            # Before Go 1.24 a package whose test binary does not build is a plain line of the
            # go command's own (test output always comes framed as JSON), never an event.
            m = _GO_BUILD_FAILED.match(raw.decode("utf-8", "replace"))
            if m:
                results[_rel_package(m.group(1), module)] = "fail"
                ev["connected"] = True
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
            if action == "run":
                started.setdefault(rel, []).append(key)
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
        if result != "fail":
            continue
        # Tests that were running when the test binary died (a panic in a goroutine, an
        # exit) never got an outcome: they failed.
        unfinished = [k for k in started.get(rel, ()) if k not in ev["tests"]]
        for key in unfinished:
            ev["tests"][key] = "failed"
        if unfinished:
            # The tests the shuffled order had not reached yet were not run: not observed.
            ev.setdefault("crashed", []).append(rel)
        if not unfinished and not any(
            v == "failed" for k, v in ev["tests"].items() if k.startswith(prefix)
        ):
            # The package failed outside any test (it did not build, TestMain failed, the
            # binary died between tests): the package is what failed.
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


# ------------------------------------------------------------------- JavaScript / TypeScript
#
# - ``jest-json``: ``jest --json`` (the report on stdout; the default reporter and the tests'
#   console go to stderr). ``vitest-json``: ``vitest run --reporter=json`` (the same shape).
#   ``mocha-json``: ``mocha --reporter json``. Test ids are ``<file>::<describe> > <test>``
#   (mocha: ``<file>::<full title>``); files relative to /testbed.
# - The stream may carry other text (what the code under test prints); the report is the one
#   JSON document of the runner's shape in it. A second such document is tamper evidence (a
#   forged report beside the real one), and so is a test id reported in two documents.
# - A test file reported with no test and a failure (a syntax error, a missing module) is a
#   collection error; so is an expected file that is not in the report.

_REPORT_START = re.compile(rb'\{\s*"(?:num[A-Z][A-Za-z]*|stats)"\s*:')
JS_OUTCOMES = {
    "passed": "passed",
    "failed": "failed",
    "pending": "skipped",
    "skipped": "skipped",
    "todo": "skipped",
    "disabled": "skipped",
}
JS_TESTBED = "/testbed/"


def _js_documents(data, shape):
    """JSON objects of the runner's report shape in ``data`` (other text around them)."""
    decoder = json.JSONDecoder()
    text = data.decode("utf-8", "replace")
    raw = data
    docs = []
    pos = 0
    while len(docs) < 20:
        m = _REPORT_START.search(raw, pos)
        if m is None:
            break
        # Byte and character offsets agree up to the first non-ASCII byte; search in text.
        start = len(raw[: m.start()].decode("utf-8", "replace"))
        try:
            obj, end = decoder.raw_decode(text, start)
        except ValueError:
            pos = m.end()
            continue
        if isinstance(obj, dict) and shape(obj):
            docs.append(obj)
        pos = len(text[:end].encode("utf-8", "replace"))
    return docs


def _js_rel(path, spec):
    path = str(path or "")
    root = spec.get("root") or JS_TESTBED
    if not root.endswith("/"):
        root += "/"
    if path.startswith(root):
        return path[len(root) :]
    return path


def _js_record(ev, key, outcome, message, seen):
    """One test's outcome; duplicate names within a document are numbered (JavaScript
    frameworks allow two tests of one name), across documents they are tamper."""
    n = seen.get(key, 0) + 1
    seen[key] = n
    if n > 1:
        key = key + " [" + str(n) + "]"
    if key in ev["tests"]:
        if len(ev["tamper"]) < 50:
            ev["tamper"].append(key[:200] + " was reported twice")
        return
    if len(ev["tests"]) < MAX_TESTS:
        ev["tests"][key] = outcome
    if outcome == "failed" and message and len(ev["messages"]) < MAX_MESSAGES:
        ev["messages"][key] = str(message)[:1000]


def _js_finish(ev, files, failed_files, spec, docs):
    expected = set(spec.get("files") or ())
    missing = sorted(f for f in expected if f not in files)
    for rel in sorted(failed_files):
        if rel not in ev["collect_errors"]:
            ev["collect_errors"].append(rel)
    for rel in missing:
        ev["collect_errors"].append(rel)
    if len(docs) > 1 and len(ev["tamper"]) < 50:
        ev["tamper"].append(str(len(docs)) + " test reports on the runner's stdout")
    ev["connected"] = bool(docs)
    ev["ended"] = len(docs) == 1 and not missing
    failed = any(v == "failed" for v in ev["tests"].values()) or bool(ev["collect_errors"])
    ev["exitstatus"] = 1 if failed else 0
    ev["reported"] = len(ev["tests"])
    return ev


def parse_jest_json(data, spec):
    """Events from ``jest --json`` or ``vitest run --reporter=json`` output bytes."""
    ev = _events()
    ev["bytes"] = len(data)
    docs = _js_documents(data, lambda o: isinstance(o.get("testResults"), list))
    files = set()
    failed_files = set()
    for doc in docs:
        seen = {}
        for suite in doc.get("testResults") or ():
            if not isinstance(suite, dict):
                continue
            rel = _js_rel(suite.get("name") or suite.get("testFilePath"), spec)
            files.add(rel)
            results = suite.get("assertionResults") or suite.get("testResults") or []
            if not isinstance(results, list):
                results = []
            status = suite.get("status")
            if status == "failed" and not any(
                isinstance(r, dict) and r.get("status") == "failed" for r in results
            ):
                # The file failed outside any test: it did not load (or a hook failed).
                failed_files.add(rel)
                msg = suite.get("message") or suite.get("failureMessage") or ""
                if msg and len(ev["messages"]) < MAX_MESSAGES:
                    ev["messages"][rel] = str(msg)[:1000]
            for item in results:
                if not isinstance(item, dict):
                    continue
                titles = [str(t) for t in (item.get("ancestorTitles") or ()) if t != ""]
                title = str(item.get("title") or item.get("fullName") or "")
                key = rel + "::" + " > ".join([*titles, title])
                outcome = JS_OUTCOMES.get(str(item.get("status")), "failed")
                msgs = item.get("failureMessages") or ()
                message = "\n".join(str(m) for m in msgs) if isinstance(msgs, list) else ""
                _js_record(ev, key, outcome, message, seen)
    return _js_finish(ev, files, failed_files, spec, docs)


def parse_mocha_json(data, spec):
    """Events from ``mocha --reporter json`` output bytes (ids use mocha's full title)."""
    ev = _events()
    ev["bytes"] = len(data)
    docs = _js_documents(
        data, lambda o: isinstance(o.get("stats"), dict) and isinstance(o.get("tests"), list)
    )
    files = set()
    failed_files = set()
    for doc in docs:
        seen = {}
        if doc.get("swefLoadFailed") is True and not doc.get("tests"):
            # Our reporter's word that Mocha ended before it made a reporter: the test files
            # did not load, and each expected one is a collection error.
            for rel in spec.get("files") or ():
                files.add(rel)
                failed_files.add(rel)
            continue
        forged = doc.get("swefForged")
        if isinstance(forged, int) and forged > 0 and len(ev["tamper"]) < 50:
            # The node --test reporter's count of results no test start announced.
            ev["tamper"].append(f"{forged} result(s) of tests that never started")
        failures = doc.get("failures") or []
        pending = doc.get("pending") or []
        pending_titles = {
            (t.get("file"), t.get("fullTitle")) for t in pending if isinstance(t, dict)
        }
        for item in doc.get("tests") or ():
            if not isinstance(item, dict):
                continue
            rel = _js_rel(item.get("file"), spec)
            files.add(rel)
            full = str(item.get("fullTitle") or item.get("title") or "")
            err = item.get("err")
            if isinstance(err, dict) and err:
                outcome = "failed"
            elif (item.get("file"), item.get("fullTitle")) in pending_titles or item.get("pending"):
                outcome = "skipped"
            else:
                outcome = "passed"
            message = err.get("message", "") if isinstance(err, dict) else ""
            _js_record(ev, rel + "::" + full, outcome, message, seen)
        # A hook that failed ("before all" hook) is a failure without a test of its own.
        for item in failures:
            if not isinstance(item, dict):
                continue
            full = str(item.get("fullTitle") or "")
            if '"before all" hook' in full or '"after all" hook' in full:
                rel = _js_rel(item.get("file"), spec)
                failed_files.add(rel)
                files.add(rel)
    return _js_finish(ev, files, failed_files, spec, docs)


PARSERS["jest-json"] = parse_jest_json
PARSERS["vitest-json"] = parse_jest_json
PARSERS["mocha-json"] = parse_mocha_json
# Node's own runner with the judge's reporter (swe_forge_node_reporter.mjs): Mocha's shape.
PARSERS["node-test-json"] = parse_mocha_json

# ------------------------------------------------------------------------------------ rust

RUST_OUTCOMES = {"ok": "passed", "failed": "failed", "ignored": "skipped"}


def parse_libtest_json(data, spec):
    """Events from the Rust run script's output: per target, a framing line
    ``{"type": "swe-forge-target", "file": ...}`` then libtest's JSON events (``--format
    json``); a last ``{"type": "swe-forge-done"}``. Test ids are ``<file>::<name>``.

    A target whose suite never starts did not compile (a collection error), one whose suite
    never ends crashed (a collection error too). A test, a target or the end reported twice,
    an event outside any target, or a suite whose counts disagree with its tests is tamper
    evidence (code under test printing frames of its own beside the real ones).
    """
    ev = _events()
    ev["bytes"] = len(data)
    expected = list(spec.get("files") or ())
    sections = {}
    current = None
    done = False

    def tamper(msg):
        if len(ev["tamper"]) < 50:
            ev["tamper"].append(msg[:300])

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
        kind = item.get("type")
        if kind == "swe-forge-target":
            ev["connected"] = True
            file = item.get("file")
            if not isinstance(file, str) or file in sections or done:
                tamper(f"target {str(file)[:200]} was framed twice")
                current = None
                continue
            current = file
            sections[file] = {
                "started": None,
                "ended": None,
                "tests": 0,
                "counts": {},
                "seen": {},
                "running": [],
            }
            continue
        if kind == "swe-forge-done":
            if done:
                tamper("the run was framed as done twice")
            done = True
            current = None
            continue
        if kind not in ("suite", "test"):
            continue
        if current is None:
            tamper("a test event outside any target")
            continue
        sec = sections[current]
        event = item.get("event")
        if kind == "suite":
            if event == "started":
                if sec["started"] is not None:
                    tamper(f"{current[:200]}: a suite started twice")
                sec["started"] = item.get("test_count")
            elif event in ("ok", "failed"):
                if sec["ended"] is not None or sec["started"] is None:
                    tamper(f"{current[:200]}: a suite ended twice or before it started")
                sec["ended"] = event
                sec["counts"] = {
                    k: item.get(k) for k in ("passed", "failed", "ignored") if k in item
                }
            continue
        name = item.get("name")
        if isinstance(name, str) and event == "started" and sec["ended"] is None:
            if len(sec["running"]) < MAX_TESTS:
                sec["running"].append(name)
            continue
        if not isinstance(name, str) or event not in RUST_OUTCOMES:
            continue
        if sec["started"] is None or sec["ended"] is not None:
            tamper(f"{current[:200]}::{name[:100]} reported outside its suite")
            continue
        key = current + "::" + name
        if key in ev["tests"]:
            tamper(key[:200] + " was reported twice")
            continue
        sec["tests"] += 1
        if len(ev["tests"]) < MAX_TESTS:
            ev["tests"][key] = RUST_OUTCOMES[event]
        outcome = RUST_OUTCOMES[event]
        sec["seen"][outcome] = sec["seen"].get(outcome, 0) + 1
        if event == "failed" and len(ev["messages"]) < MAX_MESSAGES:
            text = item.get("stdout")
            if isinstance(text, str) and text.strip():
                lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
                ev["messages"][key] = "\n".join(lines[:8])[:1000]
    for file, sec in sorted(sections.items()):
        if sec["started"] is not None and sec["ended"] is None:
            # The binary died mid-suite. When exactly one test had started and not ended,
            # that test ended it (an abort, a double free: hyperium/http-838's new test before
            # the fix): it failed. Several in flight at once say nothing of which one did.
            key_of = lambda n, f=file: f + "::" + n  # noqa: E731
            flying = [n for n in dict.fromkeys(sec["running"]) if key_of(n) not in ev["tests"]]
            if len(flying) == 1 and len(ev["tests"]) < MAX_TESTS:
                ev["tests"][key_of(flying[0])] = "failed"
                if len(ev["messages"]) < MAX_MESSAGES:
                    ev["messages"][key_of(flying[0])] = "the test binary ended during this test"
        if sec["started"] is None or sec["ended"] is None:
            ev["collect_errors"].append(file)
            continue
        counts = sec["counts"]
        if isinstance(sec["started"], int) and sec["started"] != sec["tests"]:
            tamper(f"{file[:200]}: {sec['started']} tests announced, {sec['tests']} reported")
        for word, outcome in (("passed", "passed"), ("failed", "failed"), ("ignored", "skipped")):
            if isinstance(counts.get(word), int) and counts[word] != sec["seen"].get(outcome, 0):
                tamper(f"{file[:200]}: the suite's {word} count disagrees with its tests")
    missing = [f for f in expected if f not in sections]
    ev["collect_errors"].extend(missing)
    ev["ended"] = ev["connected"] and done and not missing
    failed = any(v == "failed" for v in ev["tests"].values()) or bool(ev["collect_errors"])
    ev["exitstatus"] = 1 if failed else 0
    ev["reported"] = len(ev["tests"])
    return ev


PARSERS["libtest-json"] = parse_libtest_json


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
# evidence. A project may replace Surefire's console reporter (a tree reporter prints no
# per-class lines): every report is then checked against Maven's totals instead, the
# "Results:" lines ("Tests run: N, Failures: F, Errors: E, Skipped: S") that Surefire's own
# summary prints whatever the reporter, and the reports must add up to them exactly.
# Test ids are ``<class FQN>::<method>``.

_SF_LINE = re.compile(
    r"^\[(?:INFO|WARNING|ERROR)\] Tests run: (\d+), Failures: (\d+), Errors: (\d+), "
    r"Skipped: (\d+), Time elapsed: [^\n]*? -- in (\S+)\s*$",
    re.M,
)
#: Surefire's totals of a run (no class named, no time): one per module that ran tests.
_SF_TOTAL = re.compile(
    r"^\[(?:INFO|WARNING|ERROR)\] Tests run: (\d+), Failures: (\d+), Errors: (\d+), "
    r"Skipped: (\d+)(?:, Flakes: \d+)?\s*$",
    re.M,
)
_SF_END = re.compile(r"^\[(?:INFO|ERROR)\] BUILD (SUCCESS|FAILURE)\s*$", re.M)
MAX_REPORT_BYTES = 32 << 20
MAX_REPORT_FILES = 5000


#: The build output directory of a report format's build tool (Maven: ``target`` of any module).
BUILD_OUTPUT = {"surefire-xml": "target"}


def build_output_copy(spec, rel, digest, locked_digests):
    """Is ``rel`` (a runner file's name that appeared during the run, content ``digest``) a
    copy the build made of a file that was in the tree before it? Only inside the build
    tool's output directory (``<module>/target/...`` for Maven, which copies test resources
    there), and only byte for byte the same as a file of that name locked before the run.
    Python's runner files mean nothing to Maven, and an exact copy of one that was already
    there brings nothing new."""
    out = BUILD_OUTPUT.get((spec or {}).get("format") or "")
    if not out or not re.fullmatch(r"[0-9a-f]{64}", digest or "") or digest not in locked_digests:
        return False  # a content digest (not a link's or a large file's stand-in) that matches
    parts = rel.split("/")
    return out in parts[:-1] and ".." not in parts


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
    ran_classes = set()
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
                ran_classes.add(cls)
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
    if lines:
        for cls, counts in sorted(seen.items()):
            told = lines.get(cls)
            if told is None:
                ev["tamper"].append(cls[:200] + ": a report of a class Maven did not run")
            elif told != counts:
                ev["tamper"].append(
                    f"{cls[:200]}: the report counts {counts} but Maven counted {told}"
                )
        for cls in sorted(set(lines) - set(seen)):
            ev["tamper"].append(cls[:200] + ": Maven ran it but its report is missing")
    else:
        # The project's console reporter names no class: the reports against Maven's totals.
        totals = [tuple(int(m.group(i)) for i in range(1, 5)) for m in _SF_TOTAL.finditer(text)]
        told = tuple(sum(t[i] for t in totals) for i in range(4))
        counted = tuple(sum(c[i] for c in seen.values()) for i in range(4))
        if seen and not totals:
            ev["tamper"].append("reports of classes Maven did not run (it counted no tests)")
        elif told != counted:
            ev["tamper"].append(f"the reports count {counted} but Maven counted {told}")
    # A test class that never ran (it did not compile, or the build stopped before it) is a
    # collection error of its test file; a suite named by its display name still ran the
    # classes its cases name.
    ran = set(seen) | set(lines) | ran_classes
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
