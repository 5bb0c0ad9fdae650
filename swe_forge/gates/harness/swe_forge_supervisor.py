"""swe-forge's supervisor: the judge's process inside a task container.

Run by the host as ``python3 -I swe_forge_supervisor.py MODE`` in a ``docker exec`` as root
(uid 0 with only CHOWN, DAC_OVERRIDE, FOWNER, SETUID, SETGID and KILL; the container has no
network, a read-only root file system and size-capped tmpfs mounts). The code under test
never runs as root: every step that touches the repository's content runs as the task's user
(uid 1000), and pytest is started as that user. Because the supervisor is another uid and
never imports the project, the code under test cannot signal it, trace it, read its memory,
write its output or change its files; its stdout (the exec's stream) is the only result channel
the host reads.

Modes (the job is ``/swe-forge/job/job.json``, readable by root only):

``prepare``  extract the seed (the image's ``/testbed``: .git and install outputs) into the
             tmpfs ``/testbed``, check the work tree out, apply ``patches`` in order, list
             what changed (``git status``) and, for the patches marked ``scan``, the
             capabilities each changed Python file uses before and after (AST, in a child
             process as the task's user).
``run``      apply ``late_patches`` (the held-out test patch), write assertion canaries into
             the test files, lock the judge's files (root-owned, read-only, in directories
             the task's user cannot write), watch them with inotify, run pytest as the task's
             user with the harness plugin writing events to a pipe only the supervisor reads,
             stop every process of that user, then check the files, the limits and the
             agreement between pytest's exit status and the events.
``all``      ``prepare`` then ``run`` (the admission gate: nothing to check in between).
``serve``    the judge's container's first process: each call the host writes
             (``/swe-forge/job/call-<n>.json``: a mode above and its job) answered in turn on
             its stdout (see :func:`serve`). This is how the host calls it; a ``docker exec``
             of one mode with ``job.json`` still works (one interpreter start per call).

Each mode prints exactly one JSON object on its last line of output. Standalone on purpose:
stdlib only, Python 3.9+ (the oldest base image), no imports from swe-forge.
"""

import contextlib
import glob
import hashlib
import hmac
import json
import os
import random
import select
import signal
import stat
import struct
import subprocess
import sys
import threading
import time

BIN = os.path.dirname(os.path.abspath(__file__))
JOB = "/swe-forge/job/job.json"
RUN_DIR = "/swe-forge-run"
TESTBED = "/testbed"
#: Runner configuration: the judge's files wherever they are in the tree.
RUNNER_NAMES = (
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "noxfile.py",
)
#: Names whose appearance anywhere writable during the run is tamper evidence.
SUSPECT_NAMES = (*RUNNER_NAMES, "sitecustomize.py", "usercustomize.py")
#: Refused forks (the pids cgroup's "max" events) past which the run is stopped as a bomb.
FORK_BOMB = 1000
#: Cap on the bytes of pytest output kept (the tail) for the result.
OUTPUT_TAIL = 64 * 1024
#: Bytes of another ecosystem's structured report stream kept (its own cap, see run_tests).
REPORT_LIMIT = 96 << 20
#: Events are claims from the untrusted process: bounded and validated.
MAX_EVENT_LINE = 64 * 1024
MAX_EVENT_BYTES = 32 * 1024 * 1024
EVENTS = ("hello", "collected", "test", "collect_error", "tamper", "end")
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


#: Whether anything of the candidate's has run in this container (a failure of ours after
#: that is never an infrastructure error: see main).
STATE = {"started": False}


def log(msg):
    """A progress line on stderr (the host keeps the stream; the result is the last line)."""
    sys.stderr.write(f"supervisor: {msg}\n")
    sys.stderr.flush()


def now():
    return time.monotonic()


# ---------------------------------------------------------------------------------------------
# Running things as the task's user
# ---------------------------------------------------------------------------------------------


def as_user(job, argv, cwd=TESTBED, timeout=300, env=None, stdin=None):
    """Run a command as the task's user; return (exit code, output bytes)."""
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/home/swe",
        "LANG": "C.UTF-8",
    }
    base.update(env or {})
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=base,
            input=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            user=job["uid"],
            group=job["gid"],
            extra_groups=[],
            close_fds=True,
        )
    except subprocess.TimeoutExpired as exc:
        return -1, (exc.output or b"") + b"\n[timed out]"
    return proc.returncode, proc.stdout


def git(job, *args, timeout=300, stdin=None):
    return as_user(job, ["git", "-C", TESTBED, *args], timeout=timeout, stdin=stdin)


def text(data, limit=4000):
    return data.decode("utf-8", "replace")[-limit:]


# ---------------------------------------------------------------------------------------------
# prepare
# ---------------------------------------------------------------------------------------------


def extract_seed(job):
    seed = job.get("seed")
    if not seed:
        return
    # The tar holds "testbed/..." (docker's archive of the image's /testbed), owners kept.
    proc = subprocess.run(
        ["tar", "--numeric-owner", "-C", "/", "-xpf", seed],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=600,
    )
    if proc.returncode != 0:
        raise Infra("cannot extract the seed: " + text(proc.stdout, 800))
    # What changes the work tree from here on (the patches, the builds) is newer than this
    # mark: a file older is the seed's, and the seed can give it back.
    mark = os.path.join(RUN_DIR, ".seed-mark")
    with open(mark, "w"):
        pass
    STATE["seed"] = seed
    STATE["seed_mark"] = os.lstat(mark).st_ctime_ns


class Infra(Exception):
    """Our side failed: never the candidate's doing."""


def read_patch(path):
    """A patch's bytes, read as root: the job folder is closed to the task's user, who gets
    the patch on stdin."""
    with open(path, "rb") as fh:
        return fh.read()


def apply_patch(job, path):
    return git(job, "apply", "--whitespace=nowarn", "-", stdin=read_patch(path))


def numstat_paths(job, patch):
    """Paths a patch touches (both sides of renames), from git's own parser."""
    code, out = git(job, "apply", "--numstat", "-z", "-", stdin=read_patch(patch))
    if code != 0:
        return None
    paths = []
    items = out.split(b"\0")
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if not item:
            continue
        parts = item.split(b"\t")
        if len(parts) == 3 and parts[2]:
            paths.append(parts[2].decode("utf-8", "surrogateescape"))
        elif len(parts) == 3:
            # A rename: old and new follow as their own items.
            for _ in range(2):
                if i < len(items):
                    paths.append(items[i].decode("utf-8", "surrogateescape"))
                    i += 1
    return sorted(set(paths))


def status_paths(job):
    code, out = git(job, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    if code != 0:
        raise Infra("git status failed: " + text(out, 500))
    items = out.decode("utf-8", "surrogateescape").split("\0")
    result = []
    i = 0
    while i < len(items):
        entry = items[i]
        i += 1
        if len(entry) < 4:
            continue
        code2, path = entry[:2], entry[3:]
        result.append([path, code2 in ("??", "A ", " A", "AM")])
        if code2[0] in "RC" and i < len(items):
            result.append([items[i], False])
            i += 1
    return result


def scan_as_user(job, root, paths):
    """Capabilities of Python files, scanned by a child process as the task's user (hostile
    input must not crash or stall the supervisor)."""
    return scan_roots_as_user(job, [(root, paths)])[0]


def scan_roots_as_user(job, groups):
    """:func:`scan_as_user` for several ``(root, paths)`` groups in one scanner process (a
    patch's pre- and post-images: one interpreter start-up, not two); a result per group."""
    groups = [(root, [p for p in paths if p.endswith(".py")]) for root, paths in groups]
    wanted = [(root, paths) for root, paths in groups if paths]
    if not wanted:
        return [{} for _ in groups]
    argv = [sys.executable, "-I", "-S", os.path.join(BIN, "swe_forge_capabilities.py")]
    for n, (root, paths) in enumerate(wanted):
        argv += (["---"] if n else []) + [root, *paths]
    code, out = as_user(job, argv, cwd="/", timeout=300, env={"PYTHONHASHSEED": "0"})
    answers = None
    if code == 0:
        try:
            answers = json.loads(out.decode("utf-8"))
        except ValueError:
            answers = None
        if len(wanted) == 1 and isinstance(answers, dict):
            answers = [answers]
    if not isinstance(answers, list) or len(answers) != len(wanted):
        why = "scanner failed: " + text(out, 300) if code != 0 else "scanner output unreadable"
        answers = [{p: {"caps": {}, "error": why} for p in paths} for _root, paths in wanted]
    found = iter(answers)
    return [next(found) if paths else {} for _root, paths in groups]


def safe_rel(path):
    parts = path.split("/")
    return path and not path.startswith("/") and ".." not in parts and ".git" not in parts


def inside_testbed(path):
    """Whether ``path`` resolves inside the work tree (a symlink in the repository must not
    lead the root supervisor anywhere else)."""
    real = os.path.realpath(path)
    return real == TESTBED or real.startswith(TESTBED + "/")


def copy_pre_images(job, paths, dest):
    """Copy the current content of ``paths`` (the pre-image) to ``dest`` as root."""
    for rel in paths:
        if not rel.endswith(".py") or not safe_rel(rel):
            continue
        src = os.path.join(TESTBED, rel)
        if not inside_testbed(src):
            continue
        try:
            st = os.lstat(src)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_size > 16 << 20:
            continue
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(src, "rb") as fh, open(target, "wb") as out:
            out.write(fh.read())


#: Files whose pytest settings the host compares before and after the candidate.
CONFIG_NAMES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", ".pytest.ini")


def config_texts(job, changed):
    """Before and after of each changed configuration file that can hold pytest settings."""
    out = {}
    for path, _created in changed:
        if os.path.basename(path) not in CONFIG_NAMES or not safe_rel(path):
            continue
        code, before = git(job, "show", "HEAD:" + path, timeout=60)
        before = before[: 1 << 20].decode("utf-8", "replace")
        after = read_text(os.path.join(TESTBED, path))
        out[path] = {"before": before if code == 0 else None, "after": after}
    return out


def read_whole(path):
    """The bytes of a regular file inside the work tree (None if there is none)."""
    if not inside_testbed(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read()


def read_text(path):
    if not inside_testbed(path):
        return None
    try:
        with open(path, "rb") as fh:
            return fh.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return None


#: Bytes of one file ``show`` returns at most.
SHOW_LIMIT = 4 << 20


def show_files(paths):
    """{path: text} of regular files of the work tree (never through a link); a file that is
    missing, too large or not UTF-8 is left out."""
    out = {}
    for rel in paths or ():
        rel = str(rel)
        full = os.path.join(TESTBED, rel)
        if not safe_rel(rel) or not inside_testbed(full):
            continue
        try:
            fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                continue
            data = fh.read(SHOW_LIMIT + 1)
        if len(data) > SHOW_LIMIT:
            continue
        try:
            out[rel] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return out


#: Modules shown for the host's comparison-hook gate: how far the bases of the changed files'
#: classes are followed, how many files at most, and how many bytes in all.
IMPORT_DEPTH = 3
IMPORT_FILES = 60
IMPORT_BYTES = 6 << 20
#: Where a project's top-level packages live, besides the work tree's top.
SOURCE_ROOTS = ("", "src/", "lib/", "python/")
#: How an installed module's path is named for the host (``site-packages/pkg/mod.py``).
SITE = "site-packages/"


def site_roots():
    """The task's installed packages: its virtual environment's site-packages, then the
    interpreter's (what a class of the project may inherit from)."""
    patterns = []
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        patterns.append(os.path.join(venv, "lib", "python3*", "site-packages"))
    patterns += ["/usr/local/lib/python3*/site-packages", "/usr/lib/python3/dist-packages"]
    roots = []
    for pattern in patterns:
        for root in sorted(glob.glob(pattern)):
            if os.path.isdir(root) and not os.path.islink(root) and root not in roots:
                roots.append(root)
    return roots


def _module_path(dotted):
    """The file a dotted module name is (a work-tree path, or ``site-packages/...``), or None."""
    parts = [p for p in dotted.split(".") if p]
    if not parts or any(not p.isidentifier() for p in parts):
        return None
    base = "/".join(parts)
    for root in SOURCE_ROOTS:
        for cand in (root + base + ".py", root + base + "/__init__.py"):
            full = os.path.join(TESTBED, cand)
            if os.path.isfile(full) and not os.path.islink(full):
                return cand
    for root in site_roots():
        for cand in (base + ".py", base + "/__init__.py"):
            full = os.path.join(root, cand)
            if os.path.isfile(full):
                return SITE + cand
    return None


def _package_of(rel):
    path = rel[len(SITE) :] if rel.startswith(SITE) else rel
    for root in SOURCE_ROOTS:
        if root and path.startswith(root):
            path = path[len(root) :]
            break
    parts = path.split("/")
    return parts[:-1]


def module_files(rel, source, reexports=False):
    """The files of the modules the classes of a Python file inherit from (their bases as
    its imports name them; ``reexports``: and, for a package's ``__init__``, what it imports),
    in the work tree or among the installed packages."""
    import ast

    if len(source) > 1 << 20:
        return []
    try:
        tree = ast.parse(source, filename=rel)
    except Exception:  # the candidate's text: whatever it is, it names no module here
        return []
    package = _package_of(rel)
    names = {}
    imported = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 > len(package):
                    continue
                up = package[: len(package) - (node.level - 1)]
                head = ".".join(up + ([node.module] if node.module else []))
            else:
                head = node.module or ""
            for alias in node.names:
                target = head + "." + alias.name if head else alias.name
                names[alias.asname or alias.name] = target
                imported.append(target)
    wanted = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            while isinstance(base, ast.Subscript):
                base = base.value
            parts = []
            while isinstance(base, ast.Attribute):
                parts.insert(0, base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in names:
                wanted.add(".".join([names[base.id], *parts]))
    if reexports and rel.endswith("__init__.py"):
        wanted.update(imported)
    found = set()
    for dotted in sorted(wanted):
        parts = dotted.split(".")
        # "pkg.mod.Base": the module is a prefix (pkg/mod.py), or the package re-exports it.
        for k in range(len(parts), 0, -1):
            path = _module_path(".".join(parts[:k]))
            if path is not None:
                found.add(path)
                break
    return sorted(found)


def _read_module(rel):
    """A shown module's text: a work-tree file (never through a link) or an installed one."""
    if not rel.startswith(SITE):
        return show_files([rel]).get(rel)
    sub = rel[len(SITE) :]
    if sub.startswith("/") or ".." in sub.split("/"):
        return None
    for root in site_roots():
        full = os.path.join(root, sub)
        if os.path.isfile(full):
            try:
                with open(full, "rb") as fh:
                    data = fh.read(SHOW_LIMIT + 1)
                return data.decode("utf-8") if len(data) <= SHOW_LIMIT else None
            except (OSError, UnicodeDecodeError):
                return None
    return None


def show_imports(paths, skip):
    """{path: text} of the modules the classes of the Python files ``paths`` inherit from,
    followed ``IMPORT_DEPTH`` levels (at most ``IMPORT_FILES`` files, ``IMPORT_BYTES`` bytes;
    ``skip``: already shown). Read after the candidate is applied, from what it does not
    change: the base code (the project's, and the installed packages') its classes inherit
    from."""
    out = {}
    size = 0
    seen = set(skip)
    frontier = [(p, False) for p in paths if str(p).endswith(".py")]
    for _depth in range(IMPORT_DEPTH):
        found = []
        for rel, deep in frontier:
            data = _read_module(rel) if deep else show_files([rel]).get(rel)
            if data is None:
                continue
            found.extend(m for m in module_files(rel, data.encode("utf-8"), deep) if m not in seen)
        frontier = []
        for rel in sorted(set(found)):
            if len(out) >= IMPORT_FILES:
                return out
            seen.add(rel)
            data = _read_module(rel)
            if data is None or size + len(data) > IMPORT_BYTES:
                continue
            size += len(data)
            out[rel] = data
            frontier.append((rel, True))
    return out


def prepare(job, result):
    t = now()
    os.makedirs(RUN_DIR, exist_ok=True)
    extract_seed(job)
    code, out = git(job, "checkout", "-q", "-f", "HEAD", "--", ".")
    if code != 0:
        raise Infra("cannot check out the work tree: " + text(out, 500))
    result["seconds"]["checkout"] = round(now() - t, 3)
    if job.get("show"):
        # Files the host reads at the base commit, before anything of the candidate's is in
        # the tree (the held-out test files, to find their assertions in).
        result["shown"] = show_files(job["show"])
    if job.get("scan_all"):
        t = now()
        code, out = git(job, "ls-files", "-z", "--", "*.py")
        files = sorted(p for p in out.decode("utf-8", "surrogateescape").split("\0") if p)
        scanned = scan_as_user(job, TESTBED, files)
        result["base_capabilities"] = {
            p: sorted(v.get("caps", {})) for p, v in sorted(scanned.items()) if v.get("caps")
        }
        result["base_scan_errors"] = sum(1 for v in scanned.values() if v.get("error"))
        result["seconds"]["scan_all"] = round(now() - t, 3)
    for patch in job.get("patches", []):
        t = now()
        scanned_paths = None
        if patch.get("scan"):
            scanned_paths = numstat_paths(job, patch["path"]) or []
            pre_dir = os.path.join(RUN_DIR, "pre-" + patch["name"])
            os.makedirs(pre_dir, exist_ok=True)
            copy_pre_images(job, scanned_paths, pre_dir)
        code, out = apply_patch(job, patch["path"])
        result["seconds"]["apply_" + patch["name"]] = round(now() - t, 3)
        if code != 0:
            result["status"] = "apply_failed"
            result["failed_patch"] = patch["name"]
            result["detail"] = text(out, 1500)
            return False
        if scanned_paths is not None:
            t = now()
            pre, post = scan_roots_as_user(
                job, [(pre_dir, scanned_paths), (TESTBED, scanned_paths)]
            )
            caps = {}
            for p in sorted(set(pre) | set(post)):
                caps[p] = {
                    "pre": sorted(pre.get(p, {}).get("caps", {})),
                    "post": post.get(p, {}).get("caps", {}),
                    "error": post.get(p, {}).get("error", ""),
                }
            result.setdefault("capabilities", {})[patch["name"]] = caps
            result["seconds"]["scan_" + patch["name"]] = round(now() - t, 3)
    result["changed"] = status_paths(job)
    result["config_texts"] = config_texts(job, result["changed"])
    if job.get("show_imports") is not None:
        # The changed files as the candidate left them name what they import (and so do the
        # other files the job names: the reference fix's); the modules it did not change are
        # the base's.
        changed = {str(p) for p, _created in result["changed"]}
        starts = changed | {str(p) for p in job["show_imports"] or () if safe_rel(str(p))}
        result["shown_imports"] = show_imports(
            sorted(starts), changed | set(result.get("shown") or {})
        )
    return True


# ---------------------------------------------------------------------------------------------
# run: canaries, lock-down, watch, pytest, verdict inputs
# ---------------------------------------------------------------------------------------------


def split_nodeid(nodeid):
    """("tests/test_x.py", "Class::func", "[params]") of a pytest node id."""
    path, _, rest = nodeid.partition("::")
    params = ""
    if rest.endswith("]") and "[" in rest:
        idx = rest.index("[")
        rest, params = rest[:idx], rest[idx:]
    return path, rest, params


def write_canaries(job, spec, result):
    """Append calibration copies to the test files (each a test with one assertion site
    perturbed as a decoy would perturb it); return a map copy's node id -> {"test": original
    node id, "site": k, "seed": n}."""
    sys.path.insert(0, BIN)
    import swe_forge_canaries

    token = spec.get("token") or "".join(random.choice("abcdefghjkmnpqrstuvwxyz") for _ in range(5))
    wanted = spec.get("sites")  # None: every site (calibration), else [[nodeid, k, seed], ...]
    by_file = {}
    for nodeid in spec.get("tests", []):
        path, name, params = split_nodeid(nodeid)
        by_file.setdefault(path, []).append((nodeid, name, params))
    mapping = {}
    reasons = {}
    max_nodes = int(spec.get("max_nodes", 120))
    per_function = int(spec.get("per_function", 3))
    for path in sorted(by_file):
        if not safe_rel(path):
            continue
        full = os.path.join(TESTBED, path)
        try:
            with open(full, "rb") as fh:
                source = fh.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reasons[path] = f"unreadable: {exc}"
            continue
        names = sorted({name for _, name, _ in by_file[path]})
        sites = None
        if wanted is not None:
            sites = sorted(
                {
                    (split_nodeid(w[0])[1], int(w[1]), int(w[2]) if len(w) > 2 else 0)
                    for w in wanted
                    if split_nodeid(w[0])[0] == path and split_nodeid(w[0])[1] in names
                }
            )
            if not sites:
                continue
        code, specs, reason = swe_forge_canaries.make_canaries(
            source,
            names,
            token,
            sites=sites,
            limit=int(spec.get("limit", 40)),
            seeds=int(spec.get("seeds", 2)),
        )
        if reason:
            reasons[path] = reason
        if not code:
            continue
        with open(full, "ab") as fh:
            fh.write(code.encode("utf-8"))
        for made in specs:
            cls, _, _func = made["test"].rpartition("::")
            prefix = path + "::" + (cls + "::" if cls else "")
            instances = 0
            for nodeid, name, params in sorted(by_file[path]):
                if name != made["test"] or len(mapping) >= max_nodes:
                    continue
                if wanted is not None and not any(
                    w[0] == nodeid and w[1] == made["site"] for w in wanted
                ):
                    continue
                if wanted is None and instances >= per_function:
                    # A parametrized test is checked on a few of its cases, not all of them.
                    continue
                instances += 1
                mapping[prefix + made["name"] + params] = {
                    "test": nodeid,
                    "site": made["site"],
                    "seed": made["seed"],
                    "kind": made.get("kind", ""),
                }
    result["canaries"] = {"made": len(mapping), "token": token, "reasons": reasons}
    return mapping


#: Directories deeper than this under /testbed are not walked (and are reported).
MAX_DEPTH = 128
WALK = {"too_deep": []}


def walk_tree(root):
    """(dirpath, dirnames, filenames) top-down, iteratively, never following links and never
    deeper than MAX_DEPTH (a hostile tree must not exhaust the judge's stack)."""
    stack = [(root, 0)]
    while stack:
        dirpath, depth = stack.pop()
        try:
            entries = sorted(os.scandir(dirpath), key=lambda e: e.name)
        except OSError:
            continue
        dirnames = []
        filenames = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    dirnames.append(entry.name)
                else:
                    filenames.append(entry.name)
            except OSError:
                continue
        yield dirpath, dirnames, filenames  # the caller may prune dirnames
        if depth >= MAX_DEPTH:
            if dirnames and len(WALK["too_deep"]) < 10:
                WALK["too_deep"].append(dirpath[len(TESTBED) + 1 :])
            continue
        for name in reversed(dirnames):
            stack.append((os.path.join(dirpath, name), depth + 1))


def test_modules_of(paths):
    """The test files to close once collected, a directory among them (the test tree of
    data-driven tests, which pytest is given whole) standing for the test modules under it
    (pytest's default ``test_*.py``, ``*_test.py``): closing the directory itself would close
    the case files the tests read, and the modules pytest has yet to import."""
    out = []
    for raw in paths or ():
        raw = str(raw)
        full = os.path.join(TESTBED, raw)
        if (
            raw.startswith("/")
            or ".." in raw.split("/")
            or os.path.islink(full)
            or not os.path.isdir(full)
            or not inside_testbed(full)
        ):
            out.append(raw)
            continue
        for path in walk_files(full):
            name = os.path.basename(path)
            if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
                out.append(path[len(TESTBED) + 1 :])
    return sorted(set(out))


def walk_files(root):
    for dirpath, dirnames, filenames in walk_tree(root):
        if dirpath == TESTBED and ".git" in dirnames:
            dirnames.remove(".git")
        for name in filenames:
            yield os.path.join(dirpath, name)


def lock_down(job):
    """Make the judge's files immutable for the task's user; return (files, dirs) locked."""
    protect = job.get("protect", {})
    files = set()
    trees = []
    for rel in protect.get("files", []):
        full = os.path.join(TESTBED, rel)
        if safe_rel(rel) and os.path.lexists(full) and inside_testbed(os.path.dirname(full)):
            files.add(full)
    for rel in protect.get("trees", []):
        full = os.path.join(TESTBED, rel)
        real_dir = os.path.isdir(full) and not os.path.islink(full)
        if safe_rel(rel) and real_dir and inside_testbed(full):
            trees.append(full)
    # Runner files and start-up hooks anywhere in the tree: what is there now is the base's
    # (or the gold's; the guards refuse a candidate's), so it is locked and digested, and only
    # one that appears later counts as tamper.
    for path in walk_files(TESTBED):
        if os.path.basename(path) in SUSPECT_NAMES or path.endswith(".pth"):
            files.add(path)
    dirs = set()
    for tree in trees:
        dirs.add(tree)
        for dirpath, dirnames, filenames in walk_tree(tree):
            for d in dirnames:
                dirs.add(os.path.join(dirpath, d))
            for f in filenames:
                files.add(os.path.join(dirpath, f))
    # Every directory on the way to a locked file or tree: the task's user may neither rename
    # it away nor create a conftest.py or a forged .pyc beside the tests.
    for path in list(files) + list(dirs):
        parent = os.path.dirname(path)
        while parent.startswith(TESTBED + "/"):
            dirs.add(parent)
            parent = os.path.dirname(parent)
    for path in sorted(files):
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            os.lchown(path, 0, 0)
            continue
        os.chown(path, 0, 0)
        os.chmod(path, stat.S_IMODE(st.st_mode) & 0o555)
    for path in sorted(dirs):
        if os.path.islink(path) or not os.path.isdir(path):
            continue  # never follow a link of the repository's out of the work tree
        os.lchown(path, 0, 0)
        os.chmod(path, 0o755)
    # The work tree's top stays writable (tests write files there) but sticky: the task's
    # user cannot remove or rename what root owns in it.
    os.chown(TESTBED, 0, 0)
    os.chmod(TESTBED, 0o1777)
    return sorted(files), sorted(dirs)


def code_digests():
    """sha256 of every Python file in the work tree now (what the import gate lets load
    unscanned): the base, the candidate's changes (scanned by the gate), the tests."""
    out = set()
    for path in walk_files(TESTBED):
        if path.endswith((".py", ".pyc", ".so", ".pyd")):
            try:
                with open(path, "rb") as fh:
                    out.add(hashlib.sha256(fh.read()).hexdigest())
            except OSError:
                continue
    return sorted(out)


def digest_files(paths):
    """Content digests of the locked files (large data files: size and mtime; they are locked
    by permission all the same)."""
    out = {}
    for path in paths:
        try:
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and st.st_size > 8 << 20:
                out[path] = f"size:{st.st_size} mtime:{st.st_mtime_ns}"
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(path, "rb") as fh:
                    for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                        h.update(chunk)
                out[path] = h.hexdigest()
            else:
                out[path] = f"mode:{st.st_mode:o}"
        except OSError:
            out[path] = "gone"
    return out


def new_runner_files(before, report, polyglot):
    """Runner files or start-up hooks that appeared during the run where the tests could
    write (relative paths): ``before`` holds the locked files' digests from the start."""
    appeared = []
    locked_by_name = {}
    for path, digest in before.items():
        locked_by_name.setdefault(os.path.basename(path), set()).add(digest)
    for path in walk_files(TESTBED):
        base = os.path.basename(path)
        if (base in RUNNER_NAMES or base.endswith(".pth") or base in SUSPECT_NAMES) and (
            path not in before
        ):
            rel = path[len(TESTBED) + 1 :]
            # The runner's build copies resources into its output (Maven: a test resource
            # named tox.ini into target/test-classes): an exact copy of a file locked before
            # the run, where the runner's format says builds write, is no new file.
            if (
                report
                and polyglot is not None
                and polyglot.build_output_copy(
                    report, rel, digest_files([path]).get(path), locked_by_name.get(base, ())
                )
            ):
                continue
            appeared.append(rel)
    return appeared


class Watcher:
    """inotify on the locked directories and the work tree's top, for the whole run."""

    MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
    NAMES = {  # noqa: RUF012 - a constant table, never mutated
        0x2: "modified",
        0x4: "attributes changed",
        0x8: "written",
        0x40: "moved away",
        0x80: "moved in",
        0x100: "created",
        0x200: "deleted",
        0x400: "deleted (watched dir)",
        0x800: "moved (watched dir)",
    }

    def __init__(self, dirs, protected):
        self.events = []
        self.watches = {}
        self.protected = set(protected)
        #: Paths whose mode the supervisor itself changes during the run (hidden test files).
        self.own_attrib = set()
        self.fd = -1
        self.error = ""
        self._stop = threading.Event()
        # Stopping wakes the loop at once (a select timeout would cost every run its wait).
        self._wake_read, self._wake_write = os.pipe()
        try:
            libc = load_libc()
            self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
            if self.fd < 0:
                raise OSError(load_libc.ctypes.get_errno(), "inotify_init1")
            for d in [TESTBED, *sorted(dirs)][:4000]:
                wd = libc.inotify_add_watch(self.fd, d.encode(), self.MASK)
                if wd >= 0:
                    self.watches[wd] = d
        except Exception as exc:  # no inotify: the before/after digests still hold
            self.error = f"inotify unavailable: {exc}"
        self.thread = threading.Thread(target=self._loop, daemon=True)
        if self.fd >= 0:
            self.thread.start()

    def _loop(self):
        while not self._stop.is_set():
            ready, _, _ = select.select([self.fd, self._wake_read], [], [], 0.5)
            if self.fd in ready:
                self._drain()

    def _drain(self):
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            return
        pos = 0
        while pos + 16 <= len(data):
            wd, mask, _cookie, length = struct.unpack_from("iIII", data, pos)
            name = data[pos + 16 : pos + 16 + length].split(b"\0", 1)[0].decode("utf-8", "replace")
            pos += 16 + length
            d = self.watches.get(wd)
            if d is None:
                continue
            path = os.path.join(d, name) if name else d
            if mask & self.MASK == 0x4 and path in self.own_attrib:
                continue  # our own chown/chmod of a test file we closed
            kinds = [v for k, v in sorted(self.NAMES.items()) if mask & k]
            if d == TESTBED:
                # The top is writable by design: only the judge's names matter there.
                base = os.path.basename(path)
                if not (
                    base in SUSPECT_NAMES
                    or base.endswith(".pth")
                    or path in self.protected
                    or path in self.watches.values()
                ):
                    continue
            if len(self.events) < 200:
                self.events.append("{} {}".format(path[len(TESTBED) + 1 :] or ".", "/".join(kinds)))

    def stop(self):
        self._stop.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"x")
        if self.fd >= 0:
            self.thread.join(2)
            self._drain()
            os.close(self.fd)
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)
        return self.events


class Channel:
    """The read end of the harness's pipe: claims, authenticated, numbered, bounded.

    Every line is ``<hmac> <json>``, the HMAC keyed with the run's secret (which only the
    harness holds, in a closure), the JSON numbered from 0. A line that fails either check was
    written by something other than the harness: it is counted as forged and otherwise
    ignored, so it can neither add a claim nor hide a real one.
    """

    #: Tamper messages kept (the count of forged lines is kept in full).
    MAX_TAMPER = 50

    def __init__(self, fd, key, on_hello=None):
        self.fd = fd
        self.key = key
        self.on_hello = on_hello
        self.seq = 0
        self.log = {
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
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    #: Failure messages kept (informational: what admission may write a statement from).
    MAX_MESSAGES = 2000

    def _message(self, nodeid, event):
        message = event.get("message")
        if isinstance(message, str) and message and len(self.log["messages"]) < self.MAX_MESSAGES:
            self.log["messages"][nodeid] = message[:1000]

    def tamper(self, detail):
        if len(self.log["tamper"]) < self.MAX_TAMPER:
            self.log["tamper"].append(detail)

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.log["bytes"] += len(chunk)
            if self.log["bytes"] > MAX_EVENT_BYTES:
                self.tamper("the harness channel overflowed")
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                self._line(line)
            if len(buf) > MAX_EVENT_LINE:
                self.tamper("an over-long line on the harness channel")
                break
        os.close(self.fd)

    def _line(self, line):
        mac, _, body = line.partition(b" ")
        good = hmac.new(self.key, body, hashlib.sha256).hexdigest().encode()
        if not body or not hmac.compare_digest(mac, good):
            self.log["forged"] += 1
            self.tamper("a line on the harness channel that the harness did not write")
            return
        try:
            event = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            self.tamper("a malformed event on the harness channel")
            return
        if not isinstance(event, dict) or event.get("seq") != self.seq:
            self.tamper("an event out of sequence on the harness channel")
            return
        self.seq += 1
        self._event(event)

    def _event(self, event):
        log = self.log
        if event.get("event") not in EVENTS:
            self.tamper("an unknown event on the harness channel")
            return
        kind = event["event"]
        if log["ended"]:
            self.tamper(f"a {kind} event after the session ended")
            return
        if kind == "hello":
            log["connected"] = True
            if self.on_hello is not None:
                callback, self.on_hello = self.on_hello, None
                callback()
        elif kind == "collected":
            log["collected"] = event.get("count")
        elif kind == "test":
            nodeid, outcome = event.get("nodeid"), event.get("outcome")
            if not isinstance(nodeid, str) or outcome not in OUTCOMES:
                self.tamper("a malformed test event")
                return
            if nodeid in log["tests"]:
                # pytest ran one node twice: not something an honest run does.
                self.tamper(f"{nodeid[:200]} was reported twice")
                return
            if len(log["tests"]) < 200000:
                log["tests"][nodeid] = outcome
            self._message(nodeid, event)
        elif kind == "collect_error":
            if len(log["collect_errors"]) < 1000:
                log["collect_errors"].append(str(event.get("nodeid"))[:500])
                self._message(str(event.get("nodeid"))[:500], event)
        elif kind == "tamper":
            self.tamper(str(event.get("detail"))[:500])
        elif kind == "end":
            log["ended"] = True
            for field in ("exitstatus", "testsfailed", "reported"):
                value = event.get(field)
                log[field] = value if isinstance(value, int) else None
            if event.get("tampered"):
                self.tamper(str(event["tampered"])[:500])
            if log["reported"] is not None and log["reported"] != len(log["tests"]):
                self.tamper("the harness reported a different number of tests than arrived")


def cgroup_counter(paths, key):
    for path in paths:
        try:
            with open(path) as fh:
                for line in fh:
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == key:
                        return int(parts[1])
        except (OSError, ValueError):
            continue
    return None


def limit_counters():
    return {
        "pids_max": cgroup_counter(
            ["/sys/fs/cgroup/pids/pids.events", "/sys/fs/cgroup/pids.events"], "max"
        ),
        "oom_kill": cgroup_counter(
            ["/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"],
            "oom_kill",
        ),
    }


def full_mounts(mounts):
    out = []
    for m in mounts:
        try:
            st = os.statvfs(m)
        except OSError:
            continue
        # Nearly full (a few blocks are always left over) or out of inodes.
        if st.f_bavail * st.f_frsize < 256 * 1024 or (st.f_files and st.f_favail < 16):
            out.append(m)
    return out


def kill_user_processes(uid):
    """SIGKILL every process but the container's init and this one: whatever the tests left
    (daemons, forks, a background rewriter, processes that made themselves undumpable so
    /proc no longer shows their owner). Then reap what became ours."""
    for _ in range(50):
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        reap()
        alive = [e for e in os.listdir("/proc") if e.isdigit() and int(e) not in (1, os.getpid())]
        if not alive:
            break
        time.sleep(0.02)
    reap()


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def load_libc():
    """The C library through ctypes, loaded once. Its usual name first: ``find_library`` runs
    ``ldconfig -p`` in a subprocess, and ctypes.util imports half the standard library, which
    every supervisor call (and every twin's watcher) paid for."""
    cached = getattr(load_libc, "libc", None)
    if cached is not None:
        return cached
    import ctypes

    load_libc.ctypes = ctypes
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    load_libc.libc = libc
    return libc


def become_subreaper():
    """Orphans of the tests come to us (and are reaped) instead of piling up as zombies."""
    try:
        libc = load_libc()
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass


def pytest_cov_installed(venv):
    """Is pytest-cov in the task's environment (read-only: the image's, not the candidate's)?"""
    roots = [venv] if venv else []
    roots.append("/opt/venv")
    for root in roots:
        pattern = os.path.join(root, "lib", "python*", "site-packages", "pytest_cov-*.dist-info")
        if glob.glob(pattern):
            return True
    return False


def run_tests(job, result):
    """The ``run`` mode: the held-out tests brought in, the judge's files locked, then either
    one run (the admission gates, calibration) or the *twins* of a verification.

    Twins are K+1 runs of the same tests in this container, in the order the job gives: one
    with the held-out test files as they are, the others (decoys) each with one literal of one
    assertion changed to a wrong value of the same type and shape, the test keeping its name,
    file and place. Only the host knows which is which. A correct fix passes the first and
    fails every decoy; anything that forges a verdict from inside the tests (an exit status, a
    report, a comparison that always agrees, a test file read back) does the same in every
    twin, since it cannot tell them apart, and so makes a decoy pass. Each twin is judged by
    this process from what it observes itself: the runner's exit status (``waitpid``), the
    files, the limits; what the runner streams only explains a failure.
    """
    spec = job["run"]
    for patch in job.get("late_patches", []):
        t = now()
        code, out = apply_patch(job, patch["path"])
        result["seconds"]["apply_" + patch["name"]] = round(now() - t, 3)
        if code != 0:
            result["status"] = "apply_failed"
            result["failed_patch"] = patch["name"]
            result["detail"] = text(out, 1500)
            return
    t = now()
    canary_map = {}
    if spec.get("canaries"):
        canary_map = write_canaries(job, spec["canaries"], result)
    report = spec.get("report")
    polyglot = None
    if report:
        # Another ecosystem's runner: its structured stream is the report (no plugin speaks).
        sys.path.insert(0, BIN)
        import swe_forge_polyglot as polyglot

        # Calibration copies, which the job's files hold (see job_files below).
        canary_map = dict(spec.get("canary_map") or {})
        result["canaries"] = {"made": len(canary_map)}
    # Files the job brings for the single run (calibration copies of other ecosystems).
    for path, data in job_files(spec.get("files")):
        write_judge_file(path, data)
    twins = spec.get("twins")
    contents = None
    if twins is not None:
        contents = twin_contents(job, spec, twins, result)
        if contents is None:
            return
    files, dirs = lock_down(job)
    result["seconds"]["lock"] = round(now() - t, 3)
    result["locked"] = {"files": len(files), "dirs": len(dirs)}
    become_subreaper()
    if twins is None:
        if report:
            polyglot.fresh_report_dirs(
                TESTBED, report.get("dirs"), job["uid"], job["gid"], safe_rel
            )
        result.update(run_once(job, spec, files, dirs, canary_map, polyglot))
        return
    run_twins(job, spec, twins, contents, files, dirs, polyglot, result)


def job_files(entries):
    """(path in the work tree, bytes) of the files a job brings (``{"path", "src"}``: the
    content is a file of the root-only job folder)."""
    out = []
    for entry in entries or ():
        rel, src = str(entry.get("path") or ""), str(entry.get("src") or "")
        if not safe_rel(rel) or not src.startswith("/swe-forge/job/"):
            continue
        out.append((rel, read_patch(src)))
    return out


def write_judge_file(rel, data):
    """Write a judge's file (a test file's twin content) as root, read-only for everyone,
    never through a link; the directory must already exist inside the work tree."""
    full = os.path.join(TESTBED, rel)
    parent = os.path.dirname(full)
    if not os.path.isdir(parent) or os.path.islink(parent) or not inside_testbed(parent):
        raise Infra("cannot write " + rel + ": its directory is not in the work tree")
    if os.path.islink(full) or (os.path.lexists(full) and not os.path.isfile(full)):
        os.unlink(full)
    tmp = full + ".swe-forge-tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o444)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chown(tmp, 0, 0)
    os.chmod(tmp, 0o444)
    os.replace(tmp, full)


def twin_contents(job, spec, twins, result):
    """The files each twin writes before it runs: ``[{path: bytes}]`` in twin order. Python's
    decoys are written here (with the task's own Python, from the held-out test files as the
    test patch left them); other ecosystems' come with the job. None: the job is unusable."""
    out = []
    originals = {}

    def original(path):
        if path not in originals:
            originals[path] = read_whole(os.path.join(TESTBED, path))
        return originals[path]

    for twin in twins:
        written = dict(job_files(twin.get("files")))
        for edit in twin.get("edits") or ():
            # Another ecosystem's decoy: one literal replaced by the one calibrated at
            # admission, where the held-out test file (as the test patch left it) has it.
            path = str(edit.get("path") or "")
            data = written.get(path)
            data = data if data is not None else original(path)
            start, end = int(edit.get("start", -1)), int(edit.get("end", -1))
            old = str(edit.get("text") or "").encode("utf-8")
            if not safe_rel(path) or data is None or not 0 <= start <= end <= len(data):
                raise Infra(f"a decoy outside its file: {path}")
            if data[start:end] != old:
                result["status"] = "decoy_failed"
                result["detail"] = f"{path}: the decoy's literal is not at {start}..{end}"
                return None
            written[path] = data[:start] + str(edit.get("new") or "").encode("utf-8") + data[end:]
        decoy = twin.get("decoy")
        if decoy:
            sys.path.insert(0, BIN)
            import swe_forge_canaries

            path = split_nodeid(str(decoy.get("test", "")))[0]
            if not safe_rel(path):
                raise Infra("a decoy outside the work tree")
            source = written.get(path)
            source = source if source is not None else original(path)
            if source is None:
                raise Infra(f"the decoy's test file {path} is not in the work tree")
            source = source.decode("utf-8")
            made, why = swe_forge_canaries.decoy_source(
                source,
                split_nodeid(decoy["test"])[1],
                int(decoy.get("site", 0)),
                int(decoy.get("seed", 0)),
                str(spec.get("token") or "x"),
            )
            if made is None:
                result["status"] = "decoy_failed"
                result["detail"] = f"{decoy.get('test')} site {decoy.get('site')}: {why}"
                return None
            written[path] = made.encode("utf-8")
        out.append(written)
    # Every twin writes the same set of files (the honest one its untouched copies), so that
    # what a twin holds says nothing about which one it is.
    paths = set()
    for written in out:
        paths.update(written)
    for written in out:
        for path in paths:
            if path not in written:
                data = original(path)
                if data is None:
                    raise Infra(f"a twin's file {path} is not in the work tree")
                written[path] = data
    appendix = spec.get("appendix")  # what every twin's files end with (Python's helpers)
    if appendix:
        sys.path.insert(0, BIN)
        import swe_forge_canaries

        tail = swe_forge_canaries.helper_source(str(spec.get("token") or "x")).encode("utf-8")
        for written in out:
            for path in appendix:
                if path in written:
                    written[path] = written[path] + tail
    return out


#: Where the build outputs of each twin wait, closed to the tests' user.
TWIN_STORE = RUN_DIR + "/twins"
#: The writable places a twin may leave things in; what appears there is removed before the
#: next twin (nothing one twin leaves can tell the next one what it saw).
SCRATCH = ("/tmp", "/var/tmp", "/home/swe", "/dev/shm")


def run_twins(job, spec, twins, contents, files, dirs, polyglot, result):
    """Build (if the ecosystem compiles its tests) and run every twin, in the job's order."""
    build = spec.get("build")
    builds = [None] * len(twins)
    if build:
        t = now()
        os.makedirs(TWIN_STORE, mode=0o700, exist_ok=True)
        os.chmod(TWIN_STORE, 0o700)
        for i, written in enumerate(contents):
            for path, data in sorted(written.items()):
                write_judge_file(path, data)
            builds[i] = build_twin(job, build, i)
            kill_user_processes(job["uid"])
        result["seconds"]["build"] = round(now() - t, 3)
        # Every twin's sources and build outputs out of the tests' reach from here on: what a
        # test process can read is its own twin's program, nothing of the others.
        hide_paths(spec.get("hide"))
    baseline = scratch_listing()
    keeper = TreeKeeper()
    records = []
    started = now()
    for i, written in enumerate(contents):
        t = now()
        # What the last twin left goes first: a full disk must not stop this twin's files.
        clean_scratch(baseline)
        keeper.restore()
        if not build:
            # (Built twins wrote theirs before their build; the sources stay hidden now.)
            for path, data in sorted(written.items()):
                write_judge_file(path, data)
        if build:
            if builds[i] is None or builds[i].get("exit_code") != 0:
                records.append({"status": "build_failed", "build": builds[i], "exit_code": None})
                continue
            install_twin(build, i)
        report = spec.get("report")
        if report and polyglot is not None:
            polyglot.fresh_report_dirs(
                TESTBED, report.get("dirs"), job["uid"], job["gid"], safe_rel
            )
        # Each twin has the whole time limit of one run (the host waits for all of them).
        one = dict(spec, argv=twins[i].get("argv") or spec["argv"])
        keeper.mark()
        record = run_once(job, one, files, dirs, {}, polyglot)
        record["seconds"] = {"twin": round(now() - t, 3), **record.get("seconds", {})}
        if builds[i] is not None:
            record["build"] = builds[i]
        records.append(record)
    result["seconds"]["tests"] = round(now() - started, 3)
    result["twins"] = records
    result["status"] = "ran"
    # The first twin in the job's order fills the single-run fields (for readers of one run).
    first = records[0] if records else {}
    for key in ("output_tail", "output_bytes", "limits", "integrity", "events", "exit_code"):
        if key in first:
            result[key] = first[key]


def build_twin(job, build, i):
    """One twin's build as the tests' user; its outputs moved into the twin's store."""
    t = now()
    # A build runs the project's build scripts: the candidate's code may run from here on.
    STATE["started"] = True
    code, out = as_user(
        job,
        list(build["argv"]),
        timeout=float(build.get("timeout", 1800)),
        env={str(k): str(v) for k, v in (build.get("env") or {}).items()},
    )
    rec = {"exit_code": code, "output_tail": text(out, 6000), "seconds": round(now() - t, 3)}
    store = os.path.join(TWIN_STORE, str(i))
    os.makedirs(store, mode=0o700, exist_ok=True)
    for n, keep in enumerate(build.get("keep") or ()):
        src = str(keep.get("from") or "")
        if not src.startswith(("/tmp/", TESTBED + "/")) or ".." in src.split("/"):
            continue
        dest = os.path.join(store, str(n))
        if os.path.lexists(src) and not os.path.islink(src):
            import shutil

            shutil.rmtree(dest, ignore_errors=True)
            # The build's user owns it; moved, it is root's until it is installed again.
            shutil.move(src, dest)
            chown_tree(dest, 0, 0)
    return rec


def install_twin(build, i):
    """Put twin ``i``'s build outputs where its run expects them: root's, and a program
    execute-only (0711), never readable by the tests' user.

    A test binary holds every literal its tests compare with. Readable, the code under test
    could read it (``os.Executable``, ``/proc/self/exe``, any path) and pick the expected
    value out of it. Execute-only, the kernel still runs it, but the process it becomes is
    not dumpable: its ``/proc/self/mem``, ``/proc/self/exe`` target and the file itself are
    closed to uid 1000, so what the code can learn of its tests is what it is passed."""
    import shutil

    store = os.path.join(TWIN_STORE, str(i))
    for n, keep in enumerate(build.get("keep") or ()):
        dest = str(keep.get("to") or "")
        if not dest.startswith(RUN_DIR + "/bin"):
            continue
        shutil.rmtree(dest, ignore_errors=True)
        src = os.path.join(store, str(n))
        if os.path.isdir(src):
            shutil.copytree(src, dest, symlinks=True)
        elif os.path.isfile(src):
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy2(src, dest)
        else:
            continue
        for path in [*walk_files(dest)] if os.path.isdir(dest) else [dest]:
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode):
                    os.chmod(path, 0o711 if st.st_mode & 0o111 else 0o600)
        for dirpath, _dirs, _files in walk_tree(dest) if os.path.isdir(dest) else ():
            with contextlib.suppress(OSError):
                os.chmod(dirpath, 0o755)
        parent = os.path.dirname(dest)
        while parent.startswith(RUN_DIR):
            with contextlib.suppress(OSError):
                os.chmod(parent, 0o755)
            parent = os.path.dirname(parent)


def chown_tree(root, uid, gid):
    with contextlib.suppress(OSError):
        os.lchown(root, uid, gid)
    if os.path.isdir(root) and not os.path.islink(root):
        for dirpath, dirnames, filenames in walk_tree(root):
            for name in dirnames + filenames:
                with contextlib.suppress(OSError):
                    os.lchown(os.path.join(dirpath, name), uid, gid)


def hide_paths(paths):
    """Make paths (in the work tree or /tmp) root's and closed to everyone else."""
    for raw in paths or ():
        raw = str(raw)
        full = raw if raw.startswith("/tmp/") else os.path.join(TESTBED, raw)
        if ".." in full.split("/") or not os.path.lexists(full) or os.path.islink(full):
            continue
        if not (full.startswith("/tmp/") or inside_testbed(full)):
            continue
        chown_tree(full, 0, 0)
        with contextlib.suppress(OSError):
            os.chmod(full, 0o700 if os.path.isdir(full) else 0o600)


def scratch_listing():
    """Every path under the scratch places and the work tree now (what a twin may keep)."""
    seen = set()
    for root in (*SCRATCH, TESTBED):
        if not os.path.isdir(root):
            continue
        for dirpath, dirnames, filenames in walk_tree(root):
            if dirpath == TESTBED and ".git" in dirnames:
                dirnames.remove(".git")
            for name in dirnames + filenames:
                seen.add(os.path.join(dirpath, name))
    return seen


def tree_stats():
    """(path -> lstat) of everything under the scratch places and the work tree (not .git)."""
    out = {}
    for root in (*SCRATCH, TESTBED):
        if not os.path.isdir(root):
            continue
        with contextlib.suppress(OSError):
            out[root] = os.lstat(root)
        for dirpath, dirnames, filenames in walk_tree(root):
            if dirpath == TESTBED and ".git" in dirnames:
                dirnames.remove(".git")
            for name in dirnames + filenames:
                full = os.path.join(dirpath, name)
                with contextlib.suppress(OSError):
                    out[full] = os.lstat(full)
    return out


class TreeKeeper:
    """What a twin may leave the next one: nothing that was already there.

    Appeared files are removed by :func:`clean_scratch`; this keeps the rest. The scratch
    places' files (the builds' outputs and caches, what prepare left in ``$HOME``) are made
    root's and read-only for the twins, in root-owned sticky directories: a twin can add files
    there (removed after it), never change, rename or delete one that was there. The work
    tree stays the tests' to write (projects' tests write in it), so every file a twin changed
    in place is put back after it, and every directory's mode and times: change is read on
    ctime, which the tests' user cannot set (a write, a truncate, a chmod, a utime, a rename
    over the file all move it). What a file must be again comes from a copy made before the
    first twin (what the patches or the builds wrote) or else from the seed (the rest of the
    work tree is the seed's, as extracted)."""

    def __init__(self):
        import shutil

        self.stash = os.path.join(RUN_DIR, "keep")
        shutil.rmtree(self.stash, ignore_errors=True)
        os.makedirs(self.stash, mode=0o700)
        for root in SCRATCH:
            if os.path.isdir(root) and not os.path.islink(root):
                freeze(root)
        self.first = tree_stats()
        self.kept = set()
        mark = STATE.get("seed_mark")
        for path, st in self.first.items():
            if not path.startswith(TESTBED + "/"):
                continue
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                continue
            if mark is not None and st.st_ctime_ns < mark:
                continue  # the seed's, untouched since
            dest = self.stash + path
            os.makedirs(os.path.dirname(dest), mode=0o700, exist_ok=True)
            try:
                shutil.copy2(path, dest, follow_symlinks=False)
            except OSError:
                continue
            self.kept.add(path)
        self.before = self.first

    def mark(self):
        """The state the coming twin starts from (after its own files were written)."""
        self.before = tree_stats()

    def restore(self):
        """Give back what the last twin changed of what was there before it."""
        import shutil

        now_stats = tree_stats()
        from_seed = []
        for path, st in sorted(self.before.items()):
            first = self.first.get(path)
            if first is None:
                continue  # appeared after the first twin began: removed as appeared
            cur = now_stats.get(path)
            if stat.S_ISDIR(first.st_mode):
                if cur is not None and cur.st_ctime_ns != st.st_ctime_ns:
                    with contextlib.suppress(OSError):
                        os.chown(path, first.st_uid, first.st_gid, follow_symlinks=False)
                        os.chmod(path, stat.S_IMODE(first.st_mode))
                        os.utime(path, ns=(first.st_atime_ns, first.st_mtime_ns))
                continue
            if not path.startswith(TESTBED + "/"):
                continue  # frozen: the tests' user cannot change it
            if cur is not None and cur.st_ctime_ns == st.st_ctime_ns and cur.st_ino == st.st_ino:
                continue
            if cur is not None and stat.S_ISDIR(cur.st_mode):
                shutil.rmtree(path, ignore_errors=True)
            if path in self.kept:
                with contextlib.suppress(OSError):
                    if os.path.lexists(path):
                        os.unlink(path)
                    shutil.copy2(self.stash + path, path, follow_symlinks=False)
                    os.chown(path, first.st_uid, first.st_gid, follow_symlinks=False)
            else:
                from_seed.append(path)
        if from_seed and STATE.get("seed"):
            for path in from_seed:
                with contextlib.suppress(OSError):
                    if os.path.lexists(path):
                        os.unlink(path)
            members = [p.lstrip("/") for p in from_seed]
            subprocess.run(
                ["tar", "--numeric-owner", "-C", "/", "-xpf", STATE["seed"], "--", *members],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=600,
                check=False,
            )
        clear_ipc()


def freeze(root):
    """Everything under ``root`` root's: files read-only, directories sticky and open to all
    (new files can be made there, none of root's changed, renamed or removed)."""
    for dirpath, dirnames, filenames in walk_tree(root):
        for name in filenames:
            full = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                st = os.lstat(full)
                os.chown(full, 0, 0, follow_symlinks=False)
                if not stat.S_ISLNK(st.st_mode):
                    os.chmod(full, stat.S_IMODE(st.st_mode) & ~0o222)
        for name in dirnames:
            full = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                os.chown(full, 0, 0, follow_symlinks=False)
                if not os.path.islink(full):
                    os.chmod(full, 0o1777)
    with contextlib.suppress(OSError):
        os.chown(root, 0, 0)
        os.chmod(root, 0o1777)


def clear_ipc():
    """Remove the System V message queues, semaphores and shared memory a twin left (they
    outlive its processes)."""
    import shutil

    ipcrm = shutil.which("ipcrm")
    if ipcrm:
        subprocess.run(
            [ipcrm, "--all"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )


def clean_scratch(baseline):
    """Remove what the last twin left in the scratch places and the work tree."""
    import shutil

    for root in (*SCRATCH, TESTBED):
        if not os.path.isdir(root):
            continue
        gone = []
        for dirpath, dirnames, filenames in walk_tree(root):
            if dirpath == TESTBED and ".git" in dirnames:
                dirnames.remove(".git")
            for name in list(dirnames):
                full = os.path.join(dirpath, name)
                if full not in baseline:
                    gone.append(full)
                    dirnames.remove(name)
            for name in filenames:
                full = os.path.join(dirpath, name)
                if full not in baseline:
                    gone.append(full)
        for full in gone:
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(full)


#: Where the Java twins' preloading FIFOs and spec live (root's; see Preloader).
PRELOAD_DIR = RUN_DIR + "/preload"
#: The judge's Java agent (SweForgePreload.java, compiled by the host: sandbox.py).
PRELOAD_JAR = BIN + "/swe-forge-preload.jar"


class Preloader:
    """Closes a Java twin's held-out test classes and sources once its test JVM holds them.

    A JVM reads a class file when the class is first used, and the code under test runs in
    that JVM: the file, readable then, is an oracle of every literal its assertions compare
    with. So the judge's agent (``SweForgePreload.java``, on every JVM of the run through
    ``JAVA_TOOL_OPTIONS``, active in Surefire's fork only) reads them before the JVM's main
    class runs, writes the directories it read to a FIFO, and waits; this server then makes
    those class files and the test sources root's and 0600 (and their directories not
    writable by the tests' user, so nothing can be put in their place), and answers. The agent
    defines the classes from memory.

    A request is served however often it comes (a project may fork a JVM per module); one the
    code under test sends only closes files early, which fails its own tests.
    """

    MAX_REQUEST = 64 * 1024

    def __init__(self, entries, watcher):
        if not os.path.isfile(PRELOAD_JAR):
            # Ours, never the candidate's: nothing of its has run yet.
            raise RuntimeError(
                "the judge's Java agent is missing (swe-forge-preload.jar: is javac on the host?)"
            )
        self.entries = [e for e in entries if isinstance(e, dict)]
        self.watcher = watcher
        self.served = []
        self.stopped = False
        os.makedirs(PRELOAD_DIR, mode=0o755, exist_ok=True)
        os.chown(PRELOAD_DIR, 0, 0)
        os.chmod(PRELOAD_DIR, 0o755)
        self.request = os.path.join(PRELOAD_DIR, "request")
        self.answer = os.path.join(PRELOAD_DIR, "answer")
        self.spec = os.path.join(PRELOAD_DIR, "spec")
        for path, mode in ((self.request, 0o622), (self.answer, 0o644)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            os.mkfifo(path)
            os.chmod(path, mode)
        lines = [self.request, self.answer]
        for e in self.entries:
            lines.append("{}\t{}".format(e.get("dir", ""), e.get("prefix", "")))
        with open(self.spec, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        os.chmod(self.spec, 0o644)
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def env(self):
        """What every JVM of the run gets: the agent and where its spec is."""
        return {"SWE_FORGE_PRELOAD": self.spec, "JAVA_TOOL_OPTIONS": "-javaagent:" + PRELOAD_JAR}

    def start(self):
        self.thread.start()

    def _serve(self):
        while not self.stopped:
            try:
                fd = os.open(self.request, os.O_RDONLY)
            except OSError:
                return
            data = b""
            try:
                while len(data) < self.MAX_REQUEST:
                    chunk = os.read(fd, 4096)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            finally:
                os.close(fd)
            if self.stopped:
                return
            dirs = {ln for ln in data.decode("utf-8", "replace").splitlines() if ln}
            self.close(dirs)
            try:
                fd = os.open(self.answer, os.O_WRONLY)
            except OSError:
                return
            try:
                os.write(fd, b"1")
            except OSError:
                pass
            finally:
                os.close(fd)

    def close(self, dirs):
        """Make the held-out classes of ``dirs`` and their sources root's and unreadable."""
        for e in self.entries:
            d = str(e.get("dir", ""))
            if d not in dirs or not inside_testbed(d) or ".." in d.split("/"):
                continue
            prefix = str(e.get("prefix", ""))
            if not prefix or ".." in prefix.split("/"):
                continue
            base = os.path.join(d, prefix)
            parent, stem = os.path.dirname(base), os.path.basename(base)
            try:
                names = os.listdir(parent)
            except OSError:
                names = []
            closed = [
                os.path.join(parent, n)
                for n in names
                if n == stem + ".class" or (n.startswith(stem + "$") and n.endswith(".class"))
            ]
            hide_paths(closed)
            if os.path.isdir(parent) and not os.path.islink(parent):
                with contextlib.suppress(OSError):
                    os.chown(parent, 0, 0)
                    os.chmod(parent, 0o755)
            sources = [str(p) for p in e.get("sources") or ()]
            self.watcher.own_attrib.update(os.path.join(TESTBED, p) for p in sources)
            hide_paths(sources)
            self.served.append({"dir": d, "prefix": prefix, "classes": len(closed)})

    def stop(self):
        """Wake a server blocked on either FIFO, and take the FIFOs away."""
        self.stopped = True
        for path, flags in ((self.request, os.O_WRONLY), (self.answer, os.O_RDONLY)):
            with contextlib.suppress(OSError):
                os.close(os.open(path, flags | os.O_NONBLOCK))
        self.thread.join(1)
        for path in (self.request, self.answer):
            with contextlib.suppress(OSError):
                os.unlink(path)
        return self.served


def memory_open(pid, wait=5.0):
    """Why the test process ``pid``'s memory is readable by the tests' user ("" when it is
    not): its ``/proc/<pid>/mem`` is root's exactly when the process is not dumpable."""
    end = now() + wait
    while pid is None and now() < end:
        time.sleep(0.01)  # hello raced Popen's return: the pid is on its way
    if pid is None:
        return "the test process's memory could not be checked (no pid)"
    try:
        owner = os.stat(f"/proc/{pid}/mem").st_uid
    except OSError as exc:
        return f"the test process's memory could not be checked ({exc})"
    if owner != 0:
        return (
            "the test process is dumpable: its memory (/proc/self/mem), node ids and "
            "parameters are readable by the code under test"
        )
    return ""


def run_once(job, spec, files, dirs, canary_map, polyglot):
    """One run of the test command as the tests' user, watched; the fields of its record."""
    result = {"seconds": {}}
    report = spec.get("report")
    before = digest_files(files)
    # The harness's secret: a per-run key for its events, the tests, which of them are
    # canaries, and what the import gate allows. It travels through a pipe the harness reads
    # once at start (never a file, never the environment).
    key = os.urandom(32)
    secret = {"key": key.hex(), "strict": bool((spec.get("canaries") or {}).get("strict", True))}
    if spec.get("test_timeout"):
        secret["test_timeout"] = float(spec["test_timeout"])
    if spec.get("order") in ("natural", "shuffled"):
        secret["order"] = spec["order"]
    if spec.get("select") is not None:
        secret["tests"] = sorted(spec["select"])
        secret["canaries"] = sorted(canary_map)
        if (spec.get("canaries") or {}).get("first"):
            secret["canaries_first"] = True
    imports = spec.get("imports")
    if imports is not None:
        secret["gate_imports"] = True
        secret["allowance"] = sorted(imports.get("allowance") or ())
        secret["digests"] = code_digests()
    counters = limit_counters()
    watcher = Watcher(dirs, files)
    read_fd, write_fd = os.pipe()
    key_read, key_write = os.pipe()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/home/swe",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "VIRTUAL_ENV": os.environ.get("VIRTUAL_ENV", ""),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTEST_ADDOPTS": "",
        "PY_COLORS": "0",
        "TZ": "UTC",
        "PYTHONPATH": "/swe-forge/plugin",
        "SWE_FORGE_FD": str(write_fd),
        "SWE_FORGE_KEY_FD": str(key_read),
    }
    if not env["VIRTUAL_ENV"]:
        del env["VIRTUAL_ENV"]
    env.update({str(k): str(v) for k, v in spec.get("env", {}).items()})
    preloader = None
    if spec.get("preload") and report:
        preloader = Preloader((spec["preload"] or {}).get("entries") or (), watcher)
        env.update(preloader.env())
    deadline = now() + float(spec.get("timeout", 900))
    limit = int(spec.get("output_limit", 4 << 20))
    # Every thread and pipe exists before pytest starts: once a fork bomb has taken every pid,
    # the supervisor must not need one.
    # The test files are closed to the tests' user once the harness has read them, before
    # pytest starts collecting (the harness waits for the word): pytest imports them from the
    # harness's copy, and nothing the code under test does, even while the tests import it,
    # may read them.
    hide = test_modules_of(spec.get("hide_collected")) if not report else None
    if hide:
        secret["sources"] = sorted(str(p) for p in hide if not str(p).startswith("/"))
    ack_read, ack_write = os.pipe() if hide else (None, None)
    ack_open = [bool(hide)]
    ack_lock = threading.Lock()
    if hide:
        env["SWE_FORGE_ACK_FD"] = str(ack_read)

    def close_ack(word=b""):
        with ack_lock:
            if ack_open[0]:
                ack_open[0] = False
                with contextlib.suppress(OSError):
                    if word:
                        os.write(ack_write, word)
                    os.close(ack_write)

    def files_out_of_reach():
        try:
            watcher.own_attrib.update(os.path.join(TESTBED, str(p)) for p in hide)
            hide_paths(hide)
        finally:
            close_ack(b"1")

    started = {}

    def on_hello():
        # The harness has made pytest's process not dumpable before any code under test ran
        # (``_memory_closed``): its /proc files are root's, its memory closed to the tests'
        # user. A process whose memory is open could read its own node ids and parameters.
        why = memory_open(started.get("pid"))
        if why:
            channel.tamper(why)
        if hide:
            files_out_of_reach()

    channel = Channel(read_fd, key, on_hello)
    out_read, out_write = os.pipe()
    # Report mode: the runner's stdout is its structured stream, kept whole (up to the output
    # limit) apart from stderr, whose tail is kept as the output.
    rep_read, rep_write = os.pipe() if report else (None, None)
    stream = bytearray()
    payload = json.dumps(secret).encode("utf-8")

    def give_secret():
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(key_write, view) :]
        except OSError:
            pass
        finally:
            os.close(key_write)

    giver = threading.Thread(target=give_secret, daemon=True)
    tail = bytearray()
    total = [0]
    over = threading.Event()

    def pump():
        while True:
            try:
                chunk = os.read(out_read, 65536)
            except OSError:
                return
            if not chunk:
                return
            total[0] += len(chunk)
            tail.extend(chunk)
            if len(tail) > OUTPUT_TAIL:
                del tail[: len(tail) - OUTPUT_TAIL]
            if total[0] > limit:
                over.set()
                return

    # The structured stream is verbose by design (go test -json frames every line of every
    # test): it has a cap of its own, far above the output limit but still a cap.
    report_limit = int((report or {}).get("limit") or REPORT_LIMIT)

    def pump_report():
        while True:
            try:
                chunk = os.read(rep_read, 65536)
            except OSError:
                return
            if not chunk:
                return
            stream.extend(chunk)
            if len(stream) > report_limit:
                over.set()
                return

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    rep_reader = None
    if report:
        rep_reader = threading.Thread(target=pump_report, daemon=True)
        rep_reader.start()
    giver.start()
    if preloader is not None:
        preloader.start()
    t = now()
    argv = list(spec["argv"])
    if not report and pytest_cov_installed(env.get("VIRTUAL_ENV")) and "--no-cov" not in argv:
        # Coverage measures nothing we judge, slows every test, and a project's
        # --cov-fail-under turns a passing subset of its tests into exit status 1.
        argv.append("--no-cov")
        result["no_cov"] = True
    proc = subprocess.Popen(
        argv,
        cwd=TESTBED,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=rep_write if report else out_write,
        stderr=out_write,
        pass_fds=() if report else (write_fd, key_read, *((ack_read,) if hide else ())),
        user=job["uid"],
        group=job["gid"],
        extra_groups=[],
        start_new_session=True,
    )
    started["pid"] = proc.pid
    # From here on the candidate's code has run: a failure of ours is no longer told apart
    # from one it caused, and is never retried as an infrastructure error.
    STATE["started"] = True
    os.close(write_fd)
    os.close(key_read)
    if hide:
        os.close(ack_read)
    os.close(out_write)
    if report:
        os.close(rep_write)
    try:
        # The OOM killer takes the tests, never the judge.
        with open(f"/proc/{proc.pid}/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass
    timed_out = False
    bomb = False
    start_pids = counters.get("pids_max")
    exited = process_waiter(proc)
    while True:
        if over.is_set():
            break
        try:
            exited(0.05)
            break
        except subprocess.TimeoutExpired:
            if now() > deadline:
                timed_out = True
                break
            hits = limit_counters().get("pids_max")
            if start_pids is not None and hits is not None and hits - start_pids > FORK_BOMB:
                # Forks refused by the thousand: a fork bomb, not a test. Stop it now rather
                # than at the deadline.
                bomb = True
                break
    exited(None)
    returncode = proc.returncode
    result["seconds"]["tests"] = round(now() - t, 3)
    # Whatever the tests left running (daemons, forks, a background rewriter) dies now,
    # before anything is looked at.
    kill_user_processes(job["uid"])
    close_ack()
    if preloader is not None:
        result["preloaded"] = preloader.stop()
    if timed_out or bomb or over.is_set():
        # Killed by us: its status says nothing (and a reaped child may read as 0).
        returncode = None
    reader.join(2)
    os.close(out_read)
    if report:
        rep_reader.join(5)
        os.close(rep_read)
    channel.thread.join(5)
    watch_events = watcher.stop()
    after = digest_files(files)
    changed = sorted(p[len(TESTBED) + 1 :] for p in files if before.get(p) != after.get(p))
    appeared = new_runner_files(before, report, polyglot)
    result["status"] = (
        "timeout"
        if timed_out
        else "output_limit"
        if over.is_set()
        else "fork_bomb"
        if bomb
        else "ran"
    )
    result["exit_code"] = returncode
    result["events"] = channel.log
    if report:
        if report.get("dirs"):
            report = dict(report, files=polyglot.read_report_dirs(TESTBED, report["dirs"]))
        result["events"] = polyglot.parse(report, bytes(stream))
        result["raw_exit_code"] = returncode
        if isinstance(returncode, int) and returncode > 0:
            # Runners fail with their own codes (cargo 101, go 1 or 2): one failure code.
            result["exit_code"] = 1
    result["canary_map"] = canary_map
    result["integrity"] = {
        "changed": changed,
        "appeared": sorted(appeared)[:50],
        "watch": watch_events,
        "watch_error": watcher.error,
        "watched_dirs": len(watcher.watches),
        "too_deep": list(WALK["too_deep"]),
    }
    after_counters = limit_counters()
    result["limits"] = {
        "pids_max_hits": _delta(counters, after_counters, "pids_max"),
        "oom_kills": _delta(counters, after_counters, "oom_kill"),
        "full_mounts": full_mounts([TESTBED, "/tmp", "/home/swe", "/var/tmp", "/dev/shm"]),
        "signal": -returncode if isinstance(returncode, int) and returncode < 0 else None,
    }
    result["output_bytes"] = total[0]
    result["output_tail"] = bytes(tail).decode("utf-8", "replace")
    return result


def process_waiter(proc):
    """A ``wait(seconds)`` for ``proc`` that returns the moment it exits (``None``: close).

    ``Popen.wait`` with a timeout polls with growing sleeps, so each run's end was seen up to
    tens of milliseconds late; a pidfd (Linux 5.3+, Python 3.9+) becomes readable on exit.
    Without one (an older kernel or Python, or a seccomp profile that refuses it), the poll.
    """
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(proc.pid)
        except OSError:
            pidfd = None

    def wait(seconds):
        nonlocal pidfd
        if seconds is None:
            if pidfd is not None:
                with contextlib.suppress(OSError):
                    os.close(pidfd)
                pidfd = None
            return None
        if pidfd is None:
            return proc.wait(timeout=seconds)
        if proc.poll() is not None:
            return proc.returncode
        select.select([pidfd], [], [], seconds)
        if proc.poll() is None:
            raise subprocess.TimeoutExpired(proc.args, seconds)
        return proc.returncode

    return wait


def _delta(a, b, key):
    if a.get(key) is None or b.get(key) is None:
        return None
    return b[key] - a[key]


def handle(mode, job):
    """One call: ``mode`` on ``job``; the result object (never raises)."""
    result = {"status": "infra_error", "mode": mode, "seconds": {}}
    start = now()
    # Each call starts afresh (the serving supervisor keeps its process between calls).
    STATE["started"] = False
    WALK["too_deep"] = []
    try:
        # What we create (pre-images, the selection) is readable by the task's user.
        os.umask(0o022)
        if mode not in ("prepare", "run", "all"):
            raise Infra(f"unknown mode {mode!r}")
        ok = True
        if mode in ("prepare", "all"):
            ok = prepare(job, result)
            if ok:
                result["status"] = "ok"
        if ok and mode in ("run", "all"):
            run_tests(job, result)
    except Infra as exc:
        result["status"] = "infra_error"
        result["detail"] = str(exc)[:2000]
    except Exception as exc:
        import traceback

        result["status"] = "judge_failed" if STATE["started"] else "infra_error"
        result["detail"] = (f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")[-3000:]
    result["seconds"]["supervisor"] = round(now() - start, 3)
    return result


#: Where the serving supervisor finds its calls (``call-<n>.json``, n = 1, 2, ...: the host
#: writes each whole under another name and renames it there).
CALLS = "/swe-forge/job"
#: What starts each answer on the serving supervisor's stdout: ``<tag> <n> <bytes>\n``, then
#: that many bytes of JSON and a newline.
ANSWER_TAG = b"SWE-FORGE-ANSWER"


def wait_for(path, ifd):
    """Block until ``path`` exists (inotify on its folder where there is one, else a short
    poll: both are the same in every container, so a twin cannot tell others apart by it)."""
    while not os.path.exists(path):
        if ifd is None:
            time.sleep(0.005)
            continue
        ready, _, _ = select.select([ifd], [], [], 1.0)
        if ready:
            with contextlib.suppress(OSError):
                os.read(ifd, 65536)


def serve():
    """The container's first process: answers the host's calls one after another, in one
    process, so a call costs no ``docker exec`` and no interpreter start.

    The answers go to this process's stdout as the container's output, which the host reads
    (attached before the start); nothing else may write there: the descriptor is kept private
    (not inherited) and descriptors 1 and 2 of every child are the log (stderr)."""
    channel = os.dup(1)  # not inheritable
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    ifd = None
    with contextlib.suppress(Exception):
        libc = load_libc()
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        # IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE
        if fd >= 0 and libc.inotify_add_watch(fd, CALLS.encode(), 0x8 | 0x80 | 0x100) >= 0:
            ifd = fd
    n = 1
    while True:
        path = os.path.join(CALLS, f"call-{n}.json")
        wait_for(path, ifd)
        try:
            with open(path) as fh:
                call = json.load(fh)
            result = handle(str(call.get("mode") or ""), call.get("job") or {})
        except Exception as exc:
            result = {"status": "infra_error", "detail": f"unreadable call {n}: {exc}"[:2000]}
        data = json.dumps(result, sort_keys=True).encode("utf-8")
        view = memoryview(ANSWER_TAG + b" %d %d\n" % (n, len(data)) + data + b"\n")
        while view:
            view = view[os.write(channel, view) :]
        n += 1


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "serve":
        serve()
        return
    try:
        with open(JOB) as fh:
            job = json.load(fh)
    except Exception as exc:
        job = None
        result = {"status": "infra_error", "mode": mode, "seconds": {}, "detail": str(exc)}
    if job is not None:
        result = handle(mode, job)
    sys.stdout.write("\n" + json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
