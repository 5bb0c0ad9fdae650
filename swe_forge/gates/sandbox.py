"""The judge's container: where admission gates and verifications run untrusted code.

One design serves both, so a task is admitted under exactly the conditions it is graded in:

- the root file system is read-only; ``/testbed``, ``/tmp``, ``/var/tmp`` and ``$HOME`` are
  tmpfs mounts capped in bytes and inodes (tmpfs pages count against the memory limit too), so
  nothing a test writes reaches the host's disk, and no host folder is mounted writable;
- ``/testbed`` starts from a *seed*: the instance image's own ``/testbed`` (the one-commit
  ``.git`` and the install's outputs), copied out once per image id into a cache and mounted
  read-only; the supervisor unpacks it and checks the work tree out;
- the supervisor (``harness/swe_forge_supervisor.py``) is the container's first process: it
  runs as root with six capabilities, answers the host's calls (``prepare``, ``run``) one
  after another in the same process, and starts everything of the repository's as uid 1000
  (no capabilities, no new privileges); its stdout, which only it can write (its children
  never get the descriptor), carries the answers, read by the host from the container's start;
- our files come in through one read-only bind mount: ``/swe-forge/plugin`` (the pytest plugin,
  on the tests' ``PYTHONPATH``), ``/swe-forge/bin`` (supervisor, scanner, canaries) and
  ``/swe-forge/job`` (the job and the patches: mode 0700, root only);
- ``/etc/hosts`` names the loopback addresses (``localhost``): a container with networking
  disabled gets an empty one from the engine, so nothing resolves and a test runner that
  listens on ``localhost`` (Vitest 4 does, for its workers) cannot start, although the
  loopback interface is up.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from swe_forge.engine import ChunkReader, Engine, Limits
from swe_forge.errors import DockerError
from swe_forge.locks import file_lock

#: Files of ours that enter the container (all standalone, stdlib only).
HARNESS_FILES = (
    "swe_forge_harness.py",
    "swe_forge_supervisor.py",
    "swe_forge_capabilities.py",
    "swe_forge_canaries.py",
    "swe_forge_polyglot.py",
    "swe_forge_mocha_reporter.js",
    "swe_forge_node_reporter.mjs",
    "swe_forge_jest_guard.js",
    # The Java agent's source: its digest is the judge's; the jar is compiled from it here.
    "SweForgePreload.java",
)
#: Our Python files whose bytecode is made once per image and brought in beside them: compiling
#: them costs each judge's container about 50 ms (the supervisor, the pytest plugin, the
#: scanner it imports, the canary writer), three containers a verification.
COMPILED = (
    "swe_forge_harness.py",
    "swe_forge_supervisor.py",
    "swe_forge_capabilities.py",
    "swe_forge_canaries.py",
    "swe_forge_polyglot.py",
)
#: Run by the image's ``python3``: compiles the files of folder argv[1] into a tar at argv[2],
#: named as that interpreter looks for them (``__pycache__/<name>.<tag>.pyc``). Hash-checked
#: bytecode (PEP 552, Python 3.7+): a file is used only while its source is byte for byte the
#: one it was compiled from, whatever the dates of the copy a container gets; an older Python
#: writes an empty tar (its containers compile, as before).
_COMPILE = r"""
import os, sys, tarfile
src, out = sys.argv[1], sys.argv[2]
with tarfile.open(out, "w") as tar:
    if sys.version_info >= (3, 7) and sys.implementation.cache_tag:
        import importlib.util, py_compile
        for name in sorted(os.listdir(src)):
            if name.endswith(".py"):
                cached = os.path.basename(importlib.util.cache_from_source(name))
                cfile = os.path.join("/tmp/sf-bytecode", cached)
                py_compile.compile(os.path.join(src, name), cfile=cfile, doraise=True,
                    invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
                tar.add(cfile, arcname=os.path.basename(cfile))
"""
#: The most bytes of bytecode taken from an image (ours is about 300 KB).
BYTECODE_CAP = 8 << 20

#: The Java agent as the container gets it (compiled by the host's javac, see preload_jar).
PRELOAD_JAR = "swe-forge-preload.jar"
MOUNT = "/swe-forge"
SEED_MOUNT = "/swe-forge-seed.tar"
#: The supervisor imported rather than run as a script, so that its bytecode compiled once per
#: image (:meth:`Sandbox.bytecode`) is used (a script is compiled at every start). The path
#: it gets is the one a script would: its own folder first, never the working directory.
SUPERVISOR = [
    "python3",
    "-I",
    "-S",
    "-c",
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')];"
    f" sys.path.insert(0, '{MOUNT}/bin'); import swe_forge_supervisor as s; s.main()",
]
#: The judge's container's first process: the supervisor serving the host's calls (see
#: :class:`Answers`).
SERVE = [*SUPERVISOR, "serve"]
#: What starts each of its answers on its stdout (the supervisor's ``ANSWER_TAG``).
ANSWER_TAG = b"SWE-FORGE-ANSWER"
#: Bytes of supervisor output read back (it bounds itself far below this).
RESULT_CAP = 16 << 20
#: The judge's container's /etc/hosts: loopback names only (no other host is reachable).
HOSTS = b"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"


class SandboxError(Exception):
    """The sandbox failed on our side (never the candidate's doing)."""


class SandboxTimeout(SandboxError):
    """The host's wall clock ran out before the supervisor answered."""


class SandboxOverflow(SandboxError):
    """The supervisor's answer outgrew its cap (it bounds itself: something made it grow)."""


@dataclass(frozen=True)
class SandboxSettings:
    """Limits of the judge's container."""

    limits: Limits = field(default_factory=Limits)
    testbed_size: str = "2g"
    tmp_size: str = "512m"
    home_size: str = "256m"
    inodes: int = 400_000

    def tmpfs(self) -> dict[str, str]:
        """The writable mounts (exec allowed: tests run scripts they write)."""
        n = self.inodes
        small = max(1000, n // 4)
        return {
            "/testbed": f"size={self.testbed_size},nr_inodes={n},mode=0755,uid=1000,gid=1000,exec",
            "/tmp": f"size={self.tmp_size},nr_inodes={small},mode=1777,exec",
            "/var/tmp": f"size={self.tmp_size},nr_inodes={small},mode=1777,exec",
            "/home/swe": f"size={self.home_size},nr_inodes={small},mode=0755,uid=1000,gid=1000",
            # The judge's own scratch: root's, where twins keep the programs they built (run
            # from here: exec).
            "/swe-forge-run": "size=1g,nr_inodes=20000,mode=0755,exec",
        }


def harness_bytes() -> dict[str, bytes]:
    """Our in-container files by name."""
    pkg = resources.files("swe_forge.gates.harness")
    return {name: pkg.joinpath(name).read_bytes() for name in HARNESS_FILES}


def harness_digest(files: dict[str, bytes] | None = None) -> str:
    """One sha256 over every file of ours that runs in the container (recorded in manifests)."""
    import hashlib

    h = hashlib.sha256()
    for name, data in sorted((files if files is not None else harness_bytes()).items()):
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def preload_jar(source: bytes, cache: Path) -> bytes | None:
    """The judge's Java agent (``SweForgePreload.java``) as a jar, compiled once by the host's
    ``javac --release 11`` (the oldest JDK a Java image has) and cached by the source's
    digest; ``None`` when the host has no javac (Java twins then end as infrastructure errors
    before anything of the candidate's runs, never as its failure).

    Compiled on the host rather than in each container: a javac start costs every twin about
    a second. The judge's digest covers the source, not the jar's bytes (another javac may
    write other bytes of the same program)."""
    import hashlib
    import subprocess
    import zipfile

    key = hashlib.sha256(source).hexdigest()[:16]
    jar = cache / f"preload-{key}.jar"
    if jar.is_file():
        return jar.read_bytes()
    javac = shutil.which("javac")
    if javac is None:
        return None
    with file_lock(cache / "preload.lock"):
        if jar.is_file():
            return jar.read_bytes()
        with tempfile.TemporaryDirectory(prefix="sf-agent-") as tmp:
            src = Path(tmp) / "SweForgePreload.java"
            src.write_bytes(source)
            out = Path(tmp) / "classes"
            proc = subprocess.run(
                [javac, "--release", "11", "-nowarn", "-d", str(out), str(src)],
                capture_output=True,
                text=True,
                check=False,
                timeout=300,
            )
            if proc.returncode != 0:
                raise SandboxError(f"cannot compile the judge's Java agent: {proc.stderr[-800:]}")
            part = Path(tmp) / "agent.jar"
            fixed = (2000, 1, 1, 0, 0, 0)  # same program, same bytes: no build times
            with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as zf:
                manifest = "Manifest-Version: 1.0\r\nPremain-Class: SweForgePreload\r\n\r\n"
                zf.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", fixed), manifest)
                for cls in sorted(out.rglob("*.class")):
                    info = zipfile.ZipInfo(cls.relative_to(out).as_posix(), fixed)
                    zf.writestr(info, cls.read_bytes())
            cache.mkdir(parents=True, exist_ok=True)
            os.replace(part, jar)
    return jar.read_bytes()


def job_path(name: str) -> str:
    """Where a file put in the job folder (:meth:`Session.put`) is, in every container."""
    return f"{MOUNT}/job/{name}"


class Sandbox:
    """Opens judge's containers from instance images; holds the seed cache."""

    def __init__(self, engine: Engine, settings: SandboxSettings, cache_dir: Path) -> None:
        self.engine = engine
        self.settings = settings
        self.seeds = cache_dir / "seeds"
        self.files = harness_bytes()
        #: The digest of exactly the files this sandbox brings in (read once).
        self.digest = harness_digest(self.files)
        self._agent_dir = cache_dir / "agent"
        self._agent: bytes | None = None
        self._bytecode: dict[str, dict[str, bytes]] = {}
        # Judge's containers of a swe-forge process that was killed (SIGKILL, a lost CI
        # runner) are removed before this one starts its own.
        engine.reap_orphans()

    def seed(self, image_id: str) -> Path:
        """The image's ``/testbed`` as a tar, cached by image id (made once, under a lock)."""
        key = image_id.split(":", 1)[-1]
        path = self.seeds / f"{key}.tar"
        if path.exists():
            return path
        with file_lock(self.seeds / f"{key}.lock"):
            if path.exists():
                return path
            tmp = path.with_suffix(f".tmp-{os.getpid()}")
            try:
                with self.engine.container(image_id, ["/bin/true"]) as ctr:
                    bits, _ = ctr.get_archive("/testbed")
                    with open(tmp, "wb") as fh:
                        reader = ChunkReader(bits)
                        shutil.copyfileobj(reader, fh, 1 << 20)
                tmp.chmod(0o644)
                os.replace(tmp, path)
            except DockerError:
                raise
            except Exception as exc:
                raise SandboxError(f"cannot copy /testbed out of {image_id}: {exc}") from exc
            finally:
                with suppress(FileNotFoundError):
                    tmp.unlink()
        return path

    def bytecode(self, image_id: str) -> dict[str, bytes]:
        """Our Python files' bytecode as the image's ``python3`` makes it (``name.tag.pyc`` ->
        bytes; empty where it cannot be made), compiled once per image and judge and cached.

        Only the time to compile is saved: the bytecode is hash-checked against the source
        each container gets, so it can never run other code than the judge's files."""
        key = f"{image_id.split(':', 1)[-1]}-{self.digest[:16]}"
        if key in self._bytecode:
            return self._bytecode[key]
        path = self.seeds / "bytecode" / f"{key}.tar"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            with file_lock(path.with_suffix(".lock")):
                if not path.exists():
                    self._compile(image_id, path)
        found: dict[str, bytes] = {}
        with suppress(OSError, tarfile.TarError), tarfile.open(path) as tar:
            for member in tar:
                name = member.name
                stem = name.split(".", 1)[0] + ".py"
                if member.isfile() and name.endswith(".pyc") and stem in COMPILED:
                    fh = tar.extractfile(member)
                    if fh is not None and member.size <= BYTECODE_CAP:
                        found[name] = fh.read()
        # Read once per image and judge: every container of a verification opens with it.
        self._bytecode[key] = found
        return found

    def _compile(self, image_id: str, path: Path) -> None:
        """Write :meth:`bytecode`'s cache file for one image (an empty tar when its Python
        cannot compile ours: its containers then compile at start, as they always could)."""
        src = Path(tempfile.mkdtemp(prefix="sfv-src-"))
        try:
            src.chmod(0o755)
            for name in COMPILED:
                (src / name).write_bytes(self.files[name])
                (src / name).chmod(0o644)
            out = self.engine.run_locked(
                image_id,
                ["python3", "-I", "-S", "-c", _COMPILE, "/swe-forge-src", "/tmp/sf-bytecode.tar"],
                timeout=120,
                volumes={str(src): {"bind": "/swe-forge-src", "mode": "ro"}},
                collect=["/tmp/sf-bytecode.tar"],
                limits=Limits(output_bytes=BYTECODE_CAP // 4),
                working_dir="/",
            )
            data = out.files.get("/tmp/sf-bytecode.tar", b"") if out.exit_code == 0 else b""
            tmp = path.with_suffix(f".tmp-{os.getpid()}")
            if data:
                tmp.write_bytes(data)
            else:
                with tarfile.open(tmp, "w"):
                    pass
            os.replace(tmp, path)
        finally:
            shutil.rmtree(src, ignore_errors=True)

    def agent(self) -> bytes | None:
        """The Java agent's jar (compiled once per source; ``None`` without a javac)."""
        if self._agent is None:
            self._agent = preload_jar(self.files["SweForgePreload.java"], self._agent_dir)
        return self._agent

    @contextmanager
    def open(self, image_id: str, *, labels: dict[str, str] | None = None) -> Iterator[Session]:
        """A started judge's container and its scratch folder; both removed afterwards."""
        seed = self.seed(image_id)
        scratch = Path(tempfile.mkdtemp(prefix=f"sfv-{os.getpid()}-"))
        try:
            scratch.chmod(0o755)
            for sub, mode in (("plugin", 0o755), ("bin", 0o755), ("job", 0o700)):
                (scratch / sub).mkdir()
                (scratch / sub).chmod(mode)
            # The plugin and, for its import gate, the scanner: on the tests' PYTHONPATH.
            for name in ("swe_forge_harness.py", "swe_forge_capabilities.py"):
                plugin = scratch / "plugin" / name
                plugin.write_bytes(self.files[name])
                plugin.chmod(0o644)
            for name, data in self.files.items():
                (scratch / "bin" / name).write_bytes(data)
                (scratch / "bin" / name).chmod(0o644)
            # Hash-checked bytecode beside both copies of a compiled file (see bytecode()).
            for name, data in self.bytecode(image_id).items():
                stem = name.split(".", 1)[0] + ".py"
                for sub in ("bin", "plugin"):
                    if (scratch / sub / stem).exists():
                        cache = scratch / sub / "__pycache__"
                        cache.mkdir(mode=0o755, exist_ok=True)
                        cache.chmod(0o755)
                        (cache / name).write_bytes(data)
                        (cache / name).chmod(0o644)
            agent = self.agent()
            if agent is not None:
                (scratch / "bin" / PRELOAD_JAR).write_bytes(agent)
                (scratch / "bin" / PRELOAD_JAR).chmod(0o644)
            hosts = scratch / "hosts"
            hosts.write_bytes(HOSTS)
            hosts.chmod(0o644)
            options = self.engine.sandbox_options(
                self.settings.limits,
                tmpfs=self.settings.tmpfs(),
                mounts={str(scratch): MOUNT, str(seed): SEED_MOUNT, str(hosts): "/etc/hosts"},
            )
            ctx = self.engine.container(
                image_id,
                None,
                # Not the image's entrypoint: the supervisor, which serves our calls (one
                # process for all of them: no `docker exec`, no interpreter start per call)
                # and checks the work tree out itself.
                entrypoint=SERVE,
                environment={"HOME": "/home/swe", "PYTHONDONTWRITEBYTECODE": "1"},
                labels=labels or {},
                **options,
            )
            with ctx as ctr:
                # Attached before the start: nothing the supervisor answers is missed.
                answers = Answers(self.engine.attach_stdout(ctr), ctr)
                try:
                    try:
                        ctr.start()
                    except Exception as exc:
                        raise SandboxError(f"cannot start the container: {exc}") from exc
                    yield Session(self, ctr, scratch, answers)
                finally:
                    answers.close()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


class Answers:
    """The serving supervisor's answers, read from the container's stdout as they come.

    Each answer is ``ANSWER_TAG <n> <bytes>\\n``, that many bytes of JSON and a newline; only
    the supervisor writes there (it keeps the descriptor from its children). An answer that
    says it is larger than :data:`RESULT_CAP` is an overflow: the container is killed."""

    def __init__(self, stream: Any, ctr: Any) -> None:
        self.stream = stream
        self.ctr = ctr
        self.got: dict[int, bytes] = {}
        self.ended = False
        self.overflow = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._read, name="sf-answers", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        buf = bytearray()
        try:
            for chunk in self.stream:
                buf.extend(chunk)
                while True:
                    at = buf.find(ANSWER_TAG)
                    if at < 0:
                        # Nothing but the supervisor writes here; whatever is not an answer
                        # is dropped as it comes, but for a tail that may hold a tag cut in two.
                        del buf[: max(0, len(buf) - len(ANSWER_TAG))]
                        break
                    del buf[:at]
                    eol = buf.find(b"\n")
                    if eol < 0:
                        if len(buf) > 200:
                            self._overflowed()
                            return
                        break
                    try:
                        _, n, size = buf[:eol].split(b" ")
                        number, length = int(n), int(size)
                    except ValueError:
                        del buf[: len(ANSWER_TAG)]
                        continue
                    if length > RESULT_CAP:
                        self._overflowed()
                        return
                    if len(buf) < eol + 1 + length:
                        break
                    with self._cond:
                        self.got[number] = bytes(buf[eol + 1 : eol + 1 + length])
                        self._cond.notify_all()
                    del buf[: eol + 1 + length]
        except Exception:  # the stream breaks when the container goes
            pass
        finally:
            with self._cond:
                self.ended = True
                self._cond.notify_all()

    def _overflowed(self) -> None:
        with self._cond:
            self.overflow = True
            self._cond.notify_all()
        with suppress(Exception):
            self.ctr.kill()

    def wait(self, number: int, timeout: float) -> tuple[bytes | None, str]:
        """Answer ``number`` and how the wait ended: "answered", "timeout", "overflow" or
        "ended" (the supervisor is gone without it)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if number in self.got:
                    return self.got.pop(number), "answered"
                if self.overflow:
                    return None, "overflow"
                if self.ended:
                    return None, "ended"
                left = deadline - time.monotonic()
                if left <= 0:
                    return None, "timeout"
                self._cond.wait(min(left, 1.0))

    def close(self) -> None:
        """Stop reading (the container is going)."""
        with suppress(Exception):
            self.stream.close()


class Session:
    """One started judge's container."""

    def __init__(self, sandbox: Sandbox, ctr: Any, scratch: Path, answers: Answers) -> None:
        self.sandbox = sandbox
        self.ctr = ctr
        self.scratch = scratch
        self.answers = answers
        self.calls = 0

    def put(self, name: str, data: str | bytes) -> str:
        """Write a file into the job folder (root only); return its path in the container
        (:func:`job_path`)."""
        path = self.scratch / "job" / name
        path.write_bytes(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
        path.chmod(0o600)
        return job_path(name)

    def call(self, mode: str, job: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        """Run the supervisor in ``mode`` with ``job``; return its result object.

        Raises:
            SandboxTimeout: the host's clock ran out (the container was killed).
            SandboxError: the supervisor gave no readable result.
        """
        job = {"uid": 1000, "gid": 1000, "seed": SEED_MOUNT, **job}
        self.calls += 1
        number = self.calls
        # Written whole under another name, then renamed: the supervisor never reads half.
        name = f"call-{number}.json"
        self.put(f".{name}.part", json.dumps({"mode": mode, "job": job}, sort_keys=True))
        os.replace(self.scratch / "job" / f".{name}.part", self.scratch / "job" / name)
        out, how = self.answers.wait(number, timeout)
        if how == "timeout":
            with suppress(Exception):
                self.ctr.kill()
            raise SandboxTimeout(f"the supervisor did not answer within {timeout:.0f}s")
        if how == "overflow":
            raise SandboxOverflow(f"the supervisor's answer passed {RESULT_CAP} bytes")
        try:
            result: Any = json.loads(out) if out is not None else None
        except ValueError:
            result = None
        if not isinstance(result, dict):
            raise SandboxError(
                f"the supervisor ({mode}) gave no result ({how}): {self._log_tail()}"
            )
        if result.get("status") == "infra_error":
            raise SandboxError(f"supervisor ({mode}): {result.get('detail', '')[:1500]}")
        return result

    def _log_tail(self) -> str:
        """The end of what the supervisor logged (its stderr), for an error message."""
        with suppress(Exception):
            logs = self.ctr.logs(stdout=False, stderr=True, tail=40)
            return str(logs.decode("utf-8", "replace"))[-1500:]
        return ""

    def oom_killed(self) -> bool:
        """Whether the engine saw the container's memory limit bite."""
        with suppress(Exception):
            self.ctr.reload()
            return bool(self.ctr.attrs.get("State", {}).get("OOMKilled"))
        return False


def remove_stale_scratch() -> int:
    """Remove the scratch folders (``sfv-<pid>-*``) of processes that died (``kill -9`` skips
    cleanup); a live process's are left alone."""
    removed = 0
    root = Path(tempfile.gettempdir())
    for path in root.glob("sfv-*-*"):
        pid_text = path.name.split("-")[1]
        if not pid_text.isdigit():
            continue
        try:
            os.kill(int(pid_text), 0)
            continue  # alive: not ours to touch
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += 1
    return removed
