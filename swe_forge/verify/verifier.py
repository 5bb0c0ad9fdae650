"""Grade one candidate patch against one task, in a fresh locked-down container.

Order of work:

1. static guards on the patch (nothing runs for a refused patch);
2. the task's test patch must match the manifest's sha256, and the pinned image id must exist;
3. a fresh container from the pinned image id: no network, user 1000, all capabilities
   dropped, no new privileges, limits on pids, memory (swap equal), CPU, open files and file
   size, a tmpfs ``/tmp``, a host-side wall clock;
4. ``git apply`` the candidate (no fuzz, no rejects, no fallback), then list what actually
   changed (``git status``) and run the path guards again on it;
5. only then apply the held-out test patch;
6. run the task's test files with the harness plugin, which reports over a Unix socket the
   host serves (exactly one connection); stop the container;
7. check from outside that the test files still hold their expected content and that no
   runner configuration or start-up hook appeared;
8. reward 1.0 only when every FAIL_TO_PASS and PASS_TO_PASS test was reported passed, the
   session ended, and no tamper evidence was found. A missing test is a failure.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tarfile
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from swe_forge.config import VerifyConfig
from swe_forge.diffs import DiffParseError, apply_file_patch, parse_diff
from swe_forge.engine import ChunkReader, Engine, Limits
from swe_forge.errors import DockerError
from swe_forge.gates.runner import PytestRunner
from swe_forge.images.build import MATERIALIZE
from swe_forge.mining.classify import PathClassifier
from swe_forge.records import TaskManifest
from swe_forge.verify.channel import Channel, ChannelLog
from swe_forge.verify.guards import GuardReport, PatchGuard, protected_paths

RESULT_SCHEMA_VERSION = 1
STATUSES = (
    "resolved",
    "unresolved",
    "invalid_patch",
    "apply_failed",
    "timeout",
    "resource_limit",
    "tamper_detected",
    "infra_error",
)
MOUNT = "/swe-forge"
#: Pseudo exit code of an exec stopped for flooding its output.
OUTPUT_LIMIT = -2
_SUSPECT_NAMES = ("conftest.py", "pytest.ini", "tox.ini", "sitecustomize.py", "usercustomize.py")


@dataclass
class VerifyResult:
    """The grade of one prediction."""

    instance_id: str
    model_name_or_path: str
    status: str
    reward: float
    violations: list[dict[str, str]] = field(default_factory=list)
    tests: dict[str, str] = field(default_factory=dict)
    fail_to_pass: dict[str, str] = field(default_factory=dict)
    pass_to_pass: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    verifier: dict[str, Any] = field(default_factory=dict)
    detail: str = ""
    attempts: int = 1
    schema_version: int = RESULT_SCHEMA_VERSION
    record_type: str = "verify_result"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return asdict(self)


@dataclass(frozen=True)
class VerifySettings:
    """Limits and clocks of a verification."""

    timeout_seconds: float = 900.0
    limits: Limits = field(default_factory=Limits)
    tmpfs_size: str = "512m"
    infra_retries: int = 2

    @classmethod
    def from_config(cls, v: VerifyConfig) -> VerifySettings:
        """The settings of ``configs/default.yaml``'s ``verify`` section."""
        limits = Limits(
            memory=v.memory, pids=v.pids, cpus=v.cpus, nofile=v.nofile, fsize_bytes=v.fsize_bytes
        )
        return cls(v.timeout_seconds, limits, v.tmpfs_size, v.infra_retries)


class InfraError(Exception):
    """Something on our side failed; never the candidate's fault."""


def sha256(text: str) -> str:
    """Hex sha256 of UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _expected_test_files(task: TaskManifest) -> dict[str, str]:
    """sha256 of each file the test patch adds, as the patch defines it (modified files are
    checked by the manifest's recorded hashes when present)."""
    recorded = task.harness.get("test_files_sha256")
    if isinstance(recorded, dict):
        return {str(k): str(v) for k, v in recorded.items()}
    out: dict[str, str] = {}
    try:
        for fp in parse_diff(task.test_patch):
            if fp.old_path is None and fp.new_path:
                out[fp.new_path] = hashlib.sha256(apply_file_patch(b"", fp)).hexdigest()
    except (DiffParseError, ValueError):
        return {}
    return out


class Verifier:
    """Grades predictions; one instance serves many tasks (it holds the engine)."""

    def __init__(
        self, engine: Engine, classifier: PathClassifier, settings: VerifySettings | None = None
    ) -> None:
        self.engine = engine
        self.classifier = classifier
        self.settings = settings or VerifySettings()
        plugin = resources.files("swe_forge.gates.harness").joinpath("swe_forge_harness.py")
        self.plugin = plugin.read_bytes()
        remove_stale_scratch()
        self.plugin_sha256 = hashlib.sha256(self.plugin).hexdigest()

    def guard(self, task: TaskManifest) -> PatchGuard:
        """The guards of a task: its test patch's paths are protected."""
        return PatchGuard(
            self.classifier,
            test_patch_paths=protected_paths(task.test_patch),
            gold_patch=task.patch,
            project_name=task.image.get("project_name"),
        )

    def verify(self, task: TaskManifest, patch: str, model: str = "") -> VerifyResult:
        """Grade a patch; infrastructure errors are retried a bounded number of times."""
        attempts = 0
        last: str = ""
        while attempts <= self.settings.infra_retries:
            attempts += 1
            try:
                result = self._verify_once(task, patch, model)
                result.attempts = attempts
                return result
            except (InfraError, DockerError) as exc:
                last = str(exc)
                time.sleep(min(2.0, 0.5 * attempts))
        return VerifyResult(
            task.instance_id,
            model,
            "infra_error",
            0.0,
            detail=last[-2000:],
            attempts=attempts,
            verifier=self._verifier_block(None, None, False),
        )

    def _verifier_block(
        self, log: ChannelLog | None, exit_code: int | None, harness_ok: bool
    ) -> dict[str, Any]:
        return {
            "f2p_exit": exit_code,
            "p2p_exit": exit_code,
            "harness_sha256_verified": harness_ok,
            "harness_sha256": self.plugin_sha256,
            "session_ended": bool(log and log.ended),
            "terminal_reward": None,
        }

    def _verify_once(self, task: TaskManifest, patch: str, model: str) -> VerifyResult:
        start = time.perf_counter()
        timings: dict[str, float] = {}
        result = VerifyResult(task.instance_id, model, "unresolved", 0.0)
        # 1. static guards
        t = time.perf_counter()
        guard = self.guard(task)
        report: GuardReport = guard.check(patch)
        timings["guards"] = time.perf_counter() - t
        if not report.ok:
            return self._refused(result, report, timings, start)
        # 2. pins
        if sha256(task.test_patch) != task.harness.get("test_patch_sha256"):
            raise_infra = "the task's test patch does not match its sha256 (a corrupted task file)"
            return self._final(result, "infra_error", timings, start, detail=raise_infra)
        image_id = str(task.image.get("id") or "")
        info = self.engine.image(image_id) if image_id else None
        if info is None or info.id != image_id:
            raise InfraError(f"the pinned image {image_id or '(none)'} is not on this machine")
        harness_ok = self.plugin_sha256 == task.harness.get("harness_sha256", self.plugin_sha256)
        if not harness_ok:
            # Our own tool changed since the task was admitted: not the candidate's doing.
            return self._final(
                result,
                "infra_error",
                timings,
                start,
                detail="this swe-forge's harness differs from the one the task was admitted with; "
                "re-admit the task or verify with the swe-forge version that admitted it",
            )
        # 3..7 in one container
        with tempfile.TemporaryDirectory(prefix=f"sfv-{os.getpid()}-") as tmp:
            io_dir = Path(tmp) / "io"
            io_dir.mkdir()
            (io_dir / "swe_forge_harness.py").write_bytes(self.plugin)
            (io_dir / "candidate.patch").write_text(patch, encoding="utf-8")
            (io_dir / "test.patch").write_text(task.test_patch, encoding="utf-8")
            for f in io_dir.iterdir():
                f.chmod(0o644)
            sock_dir = Path(tmp) / "s"
            sock_dir.mkdir()
            sock_dir.chmod(0o777)
            channel = Channel(sock_dir / "h.sock")
            try:
                status, detail, exit_code, extra_violations = self._run_container(
                    task, image_id, io_dir, sock_dir, timings, guard
                )
            finally:
                log = channel.close(drain_seconds=2.0)
        result.verifier = self._verifier_block(log, exit_code, harness_ok)
        result.tests = dict(sorted(log.tests.items()))
        f2p = {t: log.tests.get(t, "missing") for t in task.FAIL_TO_PASS}
        p2p = {t: log.tests.get(t, "missing") for t in task.PASS_TO_PASS}
        result.fail_to_pass, result.pass_to_pass = f2p, p2p
        if extra_violations:
            result.violations = extra_violations
        if status != "ran":
            return self._final(result, status, timings, start, detail=detail)
        tamper = list(log.tamper)
        if not log.connected:
            tamper.append("the harness never connected")
        elif not log.ended and exit_code == 0:
            tamper.append("pytest exited 0 without ending its session")
        if tamper:
            result.violations += [{"code": "runtime_tamper", "detail": d} for d in tamper]
            return self._final(
                result, "tamper_detected", timings, start, detail="; ".join(tamper)[:2000]
            )
        all_pass = all(v == "passed" for v in f2p.values()) and all(
            v == "passed" for v in p2p.values()
        )
        if not all_pass and _looks_exhausted(detail):
            # The tests failed because a limit bit (fork or memory bomb, disk fill, ...).
            return self._final(result, "resource_limit", timings, start, detail=detail[-800:])
        if not log.ended:
            return self._final(
                result, "unresolved", timings, start, detail="the test run did not finish"
            )
        status = "resolved" if all_pass else "unresolved"
        if not all_pass:
            bad = [t for t, v in {**f2p, **p2p}.items() if v != "passed"]
            detail = (
                f"{len(bad)} expected test(s) not passed, e.g. {bad[0]}: {({**f2p, **p2p})[bad[0]]}"
            )
        else:
            detail = ""
        return self._final(result, status, timings, start, detail=detail)

    def _refused(
        self, result: VerifyResult, report: GuardReport, timings: dict[str, float], start: float
    ) -> VerifyResult:
        result.violations = report.violations
        # Refused paths first: a patch that edits the judge is an invalid patch even if its
        # code also reaches for the harness; tamper is the status when only code patterns fired.
        tamper = all(v["code"].startswith("tamper_") for v in report.violations)
        status = "tamper_detected" if tamper else "invalid_patch"
        detail = "; ".join(f"{v['code']}: {v['detail']}" for v in report.violations[:5])
        result.verifier = self._verifier_block(None, None, True)
        return self._final(result, status, timings, start, detail=detail)

    def _final(
        self,
        result: VerifyResult,
        status: str,
        timings: dict[str, float],
        start: float,
        *,
        detail: str = "",
    ) -> VerifyResult:
        result.status = status
        result.reward = 1.0 if status == "resolved" else 0.0
        result.detail = detail
        timings["total"] = time.perf_counter() - start
        result.timings = {k: round(v, 3) for k, v in timings.items()}
        if not result.verifier:
            result.verifier = self._verifier_block(None, None, True)
        result.verifier["terminal_reward"] = result.reward
        return result

    # ------------------------------------------------------------------ the container
    def _run_container(
        self,
        task: TaskManifest,
        image_id: str,
        io_dir: Path,
        sock_dir: Path,
        timings: dict[str, float],
        guard: PatchGuard,
    ) -> tuple[str, str, int | None, list[dict[str, str]]]:
        """Returns (status, detail, pytest exit code, post-apply violations).

        status "ran" means the tests ran to the end or were stopped; anything else is final.
        """
        limits = self.settings.limits
        deadline = time.perf_counter() + self.settings.timeout_seconds
        t = time.perf_counter()
        ctx = self.engine.container(
            image_id,
            None,
            # Not the image's entrypoint: the work tree is checked out by our first exec, so
            # nothing races with it.
            entrypoint=["/bin/sh", "-c", "exec sleep 2147483647"],
            **self.engine.locked_options(limits, user="1000:1000", working_dir="/testbed"),
            tmpfs={"/tmp": f"size={self.settings.tmpfs_size},mode=1777"},
            volumes={
                str(io_dir): {"bind": f"{MOUNT}/in", "mode": "ro"},
                str(sock_dir): {"bind": f"{MOUNT}/s", "mode": "rw"},
            },
            environment={
                "HOME": "/home/swe",
                "PYTHONNOUSERSITE": "1",
                "PYTHONDONTWRITEBYTECODE": "1",
            },
        )
        with ctx as ctr:
            try:
                ctr.start()
            except Exception as exc:
                raise InfraError(f"cannot start the container: {exc}") from exc
            timings["container_start"] = time.perf_counter() - t
            t = time.perf_counter()
            code, out = self._exec(ctr, ["/bin/sh", "-c", MATERIALIZE], 300)
            if code != 0:
                raise InfraError(f"cannot check out the work tree: {out[-500:]}")
            timings["checkout"] = time.perf_counter() - t
            # 4. apply the candidate
            t = time.perf_counter()
            code, out = self._exec(
                ctr, ["git", "apply", "--whitespace=nowarn", f"{MOUNT}/in/candidate.patch"], 120
            )
            timings["apply"] = time.perf_counter() - t
            if code != 0:
                return "apply_failed", out[-1500:], None, []
            code, out = self._exec(
                ctr, ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all"], 120
            )
            if code != 0:
                raise InfraError(f"git status failed in the container: {out[-500:]}")
            post = GuardReport()
            for path, created in _status_paths(out):
                guard.check_path(path, post)
                if created:
                    guard.check_new_file(path, post)
            if not post.ok:
                violations = [
                    {"code": f"post_apply_{v['code']}", "detail": v["detail"]}
                    for v in post.violations
                ]
                return (
                    "invalid_patch",
                    "after applying: " + "; ".join(v["detail"] for v in post.violations[:5]),
                    None,
                    violations,
                )
            # 5. the held-out tests, only now
            code, out = self._exec(
                ctr, ["git", "apply", "--whitespace=nowarn", f"{MOUNT}/in/test.patch"], 120
            )
            if code != 0:
                raise InfraError(f"the test patch did not apply after the candidate: {out[-500:]}")
            # 6. the tests
            files = [str(f) for f in task.harness.get("test_files", [])]
            cmd = PytestRunner().argv(files)
            env = {
                "PYTHONHASHSEED": "0",
                "SWE_FORGE_ORDER_SEED": str(int.from_bytes(os.urandom(4), "big")),
                "SWE_FORGE_SOCKET": f"{MOUNT}/s/h.sock",
                "PYTHONPATH": f"{MOUNT}/in",
                "TZ": "UTC",
                "PY_COLORS": "0",
            }
            t = time.perf_counter()
            remaining = max(1.0, deadline - time.perf_counter())
            code, out, timed_out = self._exec_deadline(ctr, cmd, env, remaining)
            timings["tests"] = time.perf_counter() - t
            # Stop everything the tests may have left running before looking at the files.
            ctr.reload()
            oom = bool(ctr.attrs.get("State", {}).get("OOMKilled"))
            with contextlib.suppress(Exception):
                ctr.kill()
            if timed_out:
                return (
                    "timeout",
                    f"the tests ran past {self.settings.timeout_seconds:.0f}s",
                    None,
                    [],
                )
            if code == OUTPUT_LIMIT:
                return "resource_limit", "output limit: " + out[-300:], None, []
            if oom or code in (137, 153):
                return "resource_limit", out[-800:], code, []
            # 7. integrity, from outside
            t = time.perf_counter()
            problems = self._integrity(ctr, task)
            timings["integrity"] = time.perf_counter() - t
            if problems:
                return (
                    "tamper_detected",
                    "; ".join(problems)[:2000],
                    code,
                    [{"code": "runtime_tamper", "detail": p} for p in problems],
                )
            return "ran", out[-5000:], code, []

    def _exec(self, ctr: Any, cmd: list[str], timeout: float) -> tuple[int, str]:
        code, out, timed_out = self._exec_deadline(ctr, cmd, {}, timeout)
        if timed_out:
            raise InfraError(f"{cmd[0]} {cmd[1] if len(cmd) > 1 else ''} timed out")
        return code, out

    def _exec_deadline(
        self, ctr: Any, cmd: list[str], env: dict[str, str], timeout: float
    ) -> tuple[int, str, bool]:
        """Run an exec with a host-side deadline and an output cap."""
        api = self.engine.api
        cap = self.settings.limits.output_bytes
        exec_id = api.exec_create(
            ctr.id, cmd, user="1000:1000", workdir="/testbed", environment=env
        )["Id"]
        chunks: list[bytes] = []
        size = [0]
        overflow = threading.Event()

        def pump() -> None:
            try:
                for chunk in api.exec_start(exec_id, stream=True, demux=False):
                    if size[0] < cap:
                        chunks.append(chunk[: cap - size[0]])
                    size[0] += len(chunk)
                    if size[0] > cap:
                        # Endless output: stop it at the source instead of reading on.
                        overflow.set()
                        with contextlib.suppress(Exception):
                            ctr.kill()
                        return
            except Exception:
                pass

        th = threading.Thread(target=pump, daemon=True)
        th.start()
        th.join(timeout)
        if th.is_alive():
            with contextlib.suppress(Exception):
                ctr.kill()
            th.join(5)
            return -1, b"".join(chunks).decode("utf-8", "replace"), True
        out = b"".join(chunks).decode("utf-8", "replace")
        if overflow.is_set():
            return (
                OUTPUT_LIMIT,
                out + f"\n[output over the {cap}-byte limit: container stopped]",
                False,
            )
        info = api.exec_inspect(exec_id)
        code = info.get("ExitCode")
        return int(code) if code is not None else -1, out, False

    def _integrity(self, ctr: Any, task: TaskManifest) -> list[str]:
        """Test files unchanged; no runner configuration or start-up hook appeared."""
        problems: list[str] = []
        expected = _expected_test_files(task)
        for path, digest in sorted(expected.items()):
            data = _read_file(ctr, f"/testbed/{path}")
            if data is None:
                problems.append(f"{path} is gone")
            elif hashlib.sha256(data).hexdigest() != digest:
                problems.append(f"{path} was changed during the run")
        try:
            bits, _ = ctr.get_archive("/testbed")
        except Exception as exc:
            raise InfraError(f"cannot read /testbed back: {exc}") from exc
        allowed = {str(p) for p in task.harness.get("config_files", [])}
        with tarfile.open(fileobj=ChunkReader(bits), mode="r|") as tar:
            for member in tar:
                name = member.name.split("/", 1)[1] if "/" in member.name else ""
                base = name.rsplit("/", 1)[-1]
                if name.startswith(".git/"):
                    continue
                if (base in _SUSPECT_NAMES or base.endswith(".pth")) and name not in allowed:
                    problems.append(f"{name} appeared during the run")
        return problems


def _read_file(ctr: Any, path: str) -> bytes | None:
    try:
        bits, _ = ctr.get_archive(path)
    except Exception:
        return None
    with tarfile.open(fileobj=ChunkReader(bits), mode="r|") as tar:
        for member in tar:
            if not member.isfile():
                return None
            fh = tar.extractfile(member)
            return fh.read() if fh else None
    return None


def _status_paths(out: str) -> list[tuple[str, bool]]:
    """(path, created) for each entry of ``git status --porcelain=v1 -z``."""
    items = out.split("\0")
    result: list[tuple[str, bool]] = []
    i = 0
    while i < len(items):
        entry = items[i]
        i += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        created = code in ("??", "A ", " A", "AM")
        result.append((path, created))
        if code[0] in "RC":
            if i < len(items):
                result.append((items[i], False))
            i += 1
    return result


def _looks_exhausted(out: str) -> bool:
    tail = out[-5000:]
    return any(
        s in tail
        for s in (
            "Resource temporarily unavailable",
            "can't start new thread",
            "Cannot allocate memory",
            "MemoryError",
            "File size limit exceeded",
            "File too large",
            "Disk quota exceeded",
            "[Errno 28]",
            "[Errno 27]",
            "[Errno 11]",
            "[Errno 12]",
            "No space left on device",
            "Too many open files",
        )
    )


def remove_stale_scratch() -> int:
    """Remove scratch folders of verifier processes that died (``kill -9`` skips cleanup)."""
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
