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
    started = {}
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
