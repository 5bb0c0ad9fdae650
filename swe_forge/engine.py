"""The one adapter to the Docker engine.

Everything that builds, runs, inspects or removes images and containers goes through
:class:`Engine`, which wraps the ``docker`` SDK: a preflight check that turns a missing engine
into one clear error, builds that always run with ``--network=none`` and keep a bounded log,
``docker import`` of a root file system, containers with unique names that are removed in a
``finally`` (set ``SWE_FORGE_KEEP_CONTAINERS=1`` to keep them for debugging), and exports of a
container's file system for audits from outside.
"""

from __future__ import annotations

import io
import json
import os
import socket
import tarfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from swe_forge.errors import BuildError, DigestError, DockerError, RegistryError

#: Every image and container swe-forge makes carries this label (for ls and prune).
LABEL_PREFIX = "org.swe-forge"
#: The registry component of every image name swe-forge gives. A name without one (such as
#: ``swe-forge/instance``) means Docker Hub to ``docker pull``, which would fetch whatever a
#: stranger published under it; ``.invalid`` is reserved (RFC 2606) and never resolves, so a
#: pull of one of our local names fails instead of fetching anything.
LOCAL_REGISTRY = "swe-forge.invalid"


def local_name(kind: str) -> str:
    """The repository of a local image of one kind: ``swe-forge.invalid/<kind>``."""
    return f"{LOCAL_REGISTRY}/{kind}"


#: Bytes of build output kept per image: the head and the tail, with a marker between.
LOG_LIMIT = 256 * 1024


@dataclass(frozen=True)
class Limits:
    """Resource limits of a locked-down container."""

    memory: str = "4g"
    pids: int = 512
    cpus: float = 2.0
    nofile: int = 4096
    fsize_bytes: int = 1 << 30
    output_bytes: int = 4 << 20


@dataclass
class RunOutcome:
    """How a command in a locked-down container ended."""

    exit_code: int | None  # None when it was killed for time
    timed_out: bool
    oom_killed: bool
    output: str
    files: dict[str, bytes]
    seconds: float


@dataclass(frozen=True)
class ImageInfo:
    """What the engine knows about one image."""

    id: str
    tags: tuple[str, ...]
    labels: dict[str, str]
    size: int
    created: str


_REGISTRY_HINT = (
    "is the registry running and reachable from the Docker engine? "
    "(scripts/ensure-registry.sh starts one on 127.0.0.1:5000)"
)
#: Per-layer statuses of a push or pull that mean the layer is done.
_LAYER_DONE = ("Pushed", "Layer already exists", "Pull complete", "Already exists", "Mounted from")


def _not_found(message: str) -> bool:
    """Does an engine's pull error say the registry has no such manifest or repository?"""
    text = message.lower()
    return "manifest unknown" in text or "not found" in text or "name unknown" in text


def bounded(text: str, limit: int = LOG_LIMIT) -> str:
    """Keep the head and the tail of a long log (errors are usually at the end)."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    half = limit // 2
    head = data[:half].decode("utf-8", "ignore")
    tail = data[-half:].decode("utf-8", "ignore")
    return f"{head}\n... [{len(data) - limit} bytes cut] ...\n{tail}"


class Engine:
    """A connection to the Docker engine.

    The engine is ``host`` when given (``unix:///path/docker.sock``, ``tcp://host:2375``),
    else what the environment says, as the docker CLI reads it: ``DOCKER_HOST`` (and
    ``DOCKER_TLS_VERIFY``, ``DOCKER_CERT_PATH``), else the default socket. So a second engine
    with its own socket serves every command with ``DOCKER_HOST=unix:///its.sock``.

    Raises on construction:
        DockerError: the SDK cannot reach an engine (no socket, daemon not running).
    """

    def __init__(self, host: str | None = None) -> None:
        try:
            import docker
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise DockerError("the docker Python package is missing") from exc
        where = host or os.environ.get("DOCKER_HOST") or "the default socket"
        try:
            # Every judge's container holds one attached stream while it lives (three per
            # verification, times --jobs): more than the SDK's default pool of 10.
            if host:
                self.client = docker.DockerClient(base_url=host, timeout=600, max_pool_size=64)
            else:
                self.client = docker.from_env(timeout=600, max_pool_size=64)
            self.client.ping()
        except Exception as exc:
            raise DockerError(
                f"no Docker engine is reachable at {where} ({type(exc).__name__}: {exc})",
                hint="run scripts/ensure-docker.sh (it installs and starts dockerd), "
                "or set DOCKER_HOST",
            ) from exc
        #: Where this engine listens (for messages).
        self.host = where
        self.api = self.client.api
        self._errors = docker.errors
        #: Labels put on every container (a batch run marks its own, to clean up after a kill).
        self.default_labels: dict[str, str] = {}
        #: Hears ``(tag, step line)`` as an image build starts each Dockerfile step ("Step 3/9
        #: : RUN ..."): a long build shows where it is (``images build`` prints them, spaced).
        self.on_build_step: Callable[[str, str], None] | None = None

    # ------------------------------------------------------------------ images
    def image(self, ref: str) -> ImageInfo | None:
        """Inspect an image by tag or id; None when it does not exist."""
        try:
            data = self.api.inspect_image(ref)
        except self._errors.ImageNotFound:
            return None
        except self._errors.APIError as exc:
            raise DockerError(f"cannot inspect image {ref}: {exc}") from exc
        return _image_info(data)

    def images(
        self, label: str = LABEL_PREFIX + ".kind", *, dangling: bool = False
    ) -> list[ImageInfo]:
        """Tagged images carrying ``label`` (by default every swe-forge image); with
        ``dangling``, the untagged ones instead (build stages and failed builds' layers)."""
        found = self.api.images(filters={"label": label, "dangling": dangling})
        out = [self.image(i["Id"]) for i in found]
        return sorted((i for i in out if i is not None), key=lambda i: (i.tags, i.id))

    def remove_image(self, ref: str, *, force: bool = False) -> bool:
        """Remove an image; False when it did not exist."""
        try:
            self.api.remove_image(ref, force=force, noprune=False)
            return True
        except self._errors.ImageNotFound:
            return False
        except self._errors.APIError as exc:
            raise DockerError(f"cannot remove image {ref}: {exc}") from exc

    def tag(self, ref: str, tag: str) -> None:
        """Give an image another tag (``repo:tag``)."""
        repo, _, name = tag.rpartition(":")
        self.api.tag(ref, repo, name, force=True)

    def import_rootfs(
        self, tar_path: Path, tag: str, *, changes: list[str], labels: dict[str, str]
    ) -> ImageInfo:
        """``docker import`` a root file system tarball as ``tag`` with Dockerfile changes."""
        all_changes = list(changes) + [
            f"LABEL {k}={json.dumps(v)}" for k, v in sorted(labels.items())
        ]
        repo, _, name = tag.rpartition(":")
        try:
            self.api.import_image(src=str(tar_path), repository=repo, tag=name, changes=all_changes)
        except self._errors.APIError as exc:
            raise BuildError(f"docker import of {tar_path} failed: {exc}") from exc
        info = self.image(tag)
        if info is None:
            raise BuildError(f"docker import did not produce {tag}")
        return info

    def build(
        self,
        context: Path,
        tag: str,
        *,
        labels: dict[str, str],
        log_path: Path | None = None,
        buildargs: dict[str, str] | None = None,
    ) -> ImageInfo:
        """Build ``context/Dockerfile`` as ``tag`` with no network; keep a bounded log.

        Raises:
            BuildError: the build failed (the log's tail is in the message).
        """
        lines: list[str] = []
        error: str | None = None
        try:
            stream = self.api.build(
                path=str(context),
                tag=tag,
                rm=True,
                forcerm=True,
                decode=True,
                network_mode="none",
                labels=labels,
                buildargs=buildargs or {},
                use_config_proxy=False,
                pull=False,
            )
            for chunk in stream:
                if "stream" in chunk:
                    line = str(chunk["stream"])
                    lines.append(line)
                    if self.on_build_step is not None and line.startswith("Step "):
                        self.on_build_step(tag, line.strip())
                if "error" in chunk:
                    error = str(chunk["error"])
                    lines.append(f"ERROR: {error}\n")
        except self._errors.APIError as exc:
            error = str(exc)
            lines.append(f"ERROR: {error}\n")
        log = bounded("".join(lines))
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_path.write_text(log, encoding="utf-8")
        if error is not None:
            tail = "".join(lines[-15:]).strip()
            raise BuildError(
                f"build of {tag} failed: {error.strip()}\n{tail}",
                hint=f"full log: {log_path}" if log_path else "",
            )
        info = self.image(tag)
        if info is None:
            raise BuildError(f"build of {tag} produced no image")
        return info

    # ------------------------------------------------------------------ registries
    def push(
        self, image: str, repository: str, tag: str, progress: Callable[[str], None] | None = None
    ) -> str:
        """Push the local image ``image`` (an id) as ``repository:tag``; return the digest the
        registry stored its manifest under (``sha256:...``), checked to name that image.

        The image is given the name ``repository:tag`` for the push, and the name is taken
        away again afterwards unless it is the image's only one (that would remove the
        image). ``progress`` hears one line per layer as it is pushed or found present.

        Raises:
            RegistryError: the registry cannot be reached or refused the push.
            DigestError: the digest the push answered does not name the pushed image.
        """
        self.api.tag(image, repository, tag, force=True)
        name = f"{repository}:{tag}"
        try:
            digest = ""
            for chunk in self.api.push(repository, tag=tag, stream=True, decode=True):
                if "error" in chunk:
                    raise RegistryError(
                        f"push of {name} failed: {str(chunk['error']).strip()}",
                        hint=_REGISTRY_HINT,
                    )
                aux = chunk.get("aux") or {}
                digest = str(aux.get("Digest") or digest)
                status = str(chunk.get("status") or "")
                if progress and chunk.get("id") and status.startswith(_LAYER_DONE):
                    progress(f"{chunk['id']}: {status}")
            if not digest.startswith("sha256:"):
                raise RegistryError(f"the registry named no digest for {name}", hint=_REGISTRY_HINT)
            # The engine records what it pushed under repository@digest: that must be it.
            pinned, own = self.image(f"{repository}@{digest}"), self.image(image)
            if pinned is None or own is None or pinned.id != own.id:
                raise DigestError(
                    f"the push of {name} answered {digest}, which is not that image here",
                    hint="push again; if it persists, do not trust this registry",
                )
            return digest
        except self._errors.APIError as exc:
            raise RegistryError(f"push of {name} failed: {exc}", hint=_REGISTRY_HINT) from exc
        finally:
            info = self.image(name)
            if info is not None and len(info.tags) > 1:
                with suppress(self._errors.APIError):
                    self.api.remove_image(name, noprune=True)

    def pull(
        self, reference: str, progress: Callable[[str], None] | None = None
    ) -> ImageInfo | None:
        """Pull ``reference`` (``repo@sha256:...`` or ``repo:tag``); None when the registry
        answers that it has no such image.

        Pulled by digest, the engine checks what it receives against the digest (the
        manifest's hash, and through it every layer's), so what arrives is what was pinned.

        Raises:
            RegistryError: the registry cannot be reached or refused the pull.
        """
        try:
            for chunk in self.api.pull(reference, stream=True, decode=True):
                if "error" in chunk:
                    message = str(chunk["error"]).strip()
                    if _not_found(message):
                        return None
                    raise RegistryError(
                        f"pull of {reference} failed: {message}", hint=_REGISTRY_HINT
                    )
                status = str(chunk.get("status") or "")
                if progress and chunk.get("id") and status.startswith(_LAYER_DONE):
                    progress(f"{chunk['id']}: {status}")
        except self._errors.APIError as exc:
            if _not_found(str(exc)):
                return None
            raise RegistryError(f"pull of {reference} failed: {exc}", hint=_REGISTRY_HINT) from exc
        return self.image(reference)

    def save(self, names: list[str], chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """``docker save`` of several images into one archive (shared layers once), as a
        stream of chunks in the engine's own archive format.

        Raises:
            DockerError: an image does not exist or the engine refused.
        """
        # The SDK only saves one image per call (``get_image``); the engine's endpoint takes
        # several names, and one call writes each shared layer (the base's) once.
        try:
            res = self.api._get(self.api._url("/images/get"), params={"names": names}, stream=True)
            self.api._raise_for_status(res)
        except self._errors.APIError as exc:
            raise DockerError(f"cannot save {', '.join(names)}: {exc}") from exc
        yield from self.api._stream_raw_result(res, chunk_size, False)

    def load(self, archive: IO[bytes]) -> list[str]:
        """``docker load`` of an archive (read as a stream); return what the engine says it
        loaded: ``name:tag`` for named images, the id for the others.

        Raises:
            DockerError: the engine refused the archive.
        """
        loaded = []
        try:
            for chunk in self.api.load_image(archive):
                if "error" in chunk:
                    raise DockerError(f"the engine refused the archive: {chunk['error']}")
                text = str(chunk.get("stream") or "").strip()
                for prefix in ("Loaded image: ", "Loaded image ID: "):
                    if text.startswith(prefix):
                        loaded.append(text[len(prefix) :])
        except self._errors.APIError as exc:
            raise DockerError(f"the engine refused the archive: {exc}") from exc
        return loaded

    def history_sizes(self, ref: str) -> list[tuple[str, int]]:
        """(created_by, size) of each layer, newest first."""
        return [(str(h.get("CreatedBy", "")), int(h.get("Size", 0))) for h in self.api.history(ref)]

    # ------------------------------------------------------------------ containers
    @contextmanager
    def container(
        self, image: str, command: list[str] | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """A created (not started) container with a unique name, removed afterwards.

        Extra keyword arguments go to the SDK's ``containers.create``; networking is off
        unless the caller says otherwise.
        """
        kwargs.setdefault("network_disabled", True)
        name = f"swe-forge-{uuid.uuid4().hex[:12]}"
        labels = {**self.default_labels, **dict(kwargs.pop("labels", {}) or {})}
        labels[LABEL_PREFIX + ".container"] = "1"
        # Who made it: a process killed before its clean-up leaves it to reap_orphans().
        labels[LABEL_PREFIX + ".owner"] = process_identity(os.getpid())
        try:
            ctr = self.client.containers.create(image, command, name=name, labels=labels, **kwargs)
        except self._errors.ImageNotFound as exc:
            raise DockerError(f"image {image} not found", hint="build it first") from exc
        except self._errors.APIError as exc:
            raise DockerError(f"cannot create a container from {image}: {exc}") from exc
        try:
            yield ctr
        finally:
            if not os.environ.get("SWE_FORGE_KEEP_CONTAINERS"):
                with suppress(self._errors.NotFound):
                    ctr.remove(force=True, v=True)

    def run(
        self, image: str, command: list[str], *, timeout: float = 600, **kwargs: Any
    ) -> tuple[int, str]:
        """Run a command to completion in a fresh container; return (exit code, output)."""
        with self.container(image, command, **kwargs) as ctr:
            ctr.start()
            try:
                result = ctr.wait(timeout=timeout)
            except Exception as exc:  # requests' ReadTimeout and friends
                ctr.kill()
                raise DockerError(f"command in {image} timed out after {timeout}s") from exc
            out = ctr.logs(stdout=True, stderr=True).decode("utf-8", "replace")
            return int(result.get("StatusCode", -1)), bounded(out)

    def run_locked(
        self,
        image: str,
        command: list[str],
        *,
        timeout: float,
        volumes: dict[str, dict[str, str]] | None = None,
        environment: dict[str, str] | None = None,
        collect: list[str] | None = None,
        limits: Limits | None = None,
        user: str = "1000:1000",
        working_dir: str = "/testbed",
    ) -> RunOutcome:
        """Run a command in a fresh, locked-down container and collect files afterwards.

        No network, all capabilities dropped, no new privileges, a non-root user, limits on
        memory (swap equal), pids, CPU, open files and file size; a host-side wall clock
        that kills the container; output captured up to a byte cap. ``collect`` names files
        to copy out once the command has ended (missing ones are absent from the result).
        """
        import time as _time

        limits = limits or Limits()
        start = _time.perf_counter()
        with self.container(
            image,
            command,
            **self.locked_options(limits, user=user, working_dir=working_dir),
            environment=environment or {},
            volumes=volumes or {},
        ) as ctr:
            ctr.start()
            timed_out = False
            try:
                result = ctr.wait(timeout=timeout)
                code: int | None = int(result.get("StatusCode", -1))
            except Exception:  # requests' ReadTimeout: the wall clock ran out
                timed_out = True
                code = None
                with suppress(Exception):
                    ctr.kill()
            seconds = _time.perf_counter() - start
            raw = b""
            with suppress(Exception):
                raw = ctr.logs(stdout=True, stderr=True, tail=5000)
            output = bounded(raw[-limits.output_bytes :].decode("utf-8", "replace"))
            state = {}
            with suppress(Exception):
                ctr.reload()
                state = ctr.attrs.get("State", {})
            files: dict[str, bytes] = {}
            for path in collect or []:
                with suppress(Exception):
                    bits, _stat = ctr.get_archive(path)
                    with tarfile.open(fileobj=ChunkReader(bits), mode="r|") as tar:
                        for member in tar:
                            fh = tar.extractfile(member)
                            if fh is not None:
                                files[path] = fh.read(limits.output_bytes * 4)
                            break
            return RunOutcome(code, timed_out, bool(state.get("OOMKilled")), output, files, seconds)

    def locked_options(self, limits: Limits, *, user: str, working_dir: str) -> dict[str, Any]:
        """Container options of every container that runs untrusted code: no network, no
        capabilities, no new privileges, a non-root user, and the resource limits."""
        return {
            "network_mode": "none",
            "network_disabled": True,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "pids_limit": limits.pids,
            "mem_limit": limits.memory,
            "memswap_limit": limits.memory,
            # The engine refuses more CPUs than the machine has: a ceiling of 2 on a 1-CPU
            # machine is that machine.
            "nano_cpus": int(min(limits.cpus, float(os.cpu_count() or 1)) * 1e9),
            "ulimits": [
                self._ulimit("nofile", limits.nofile),
                self._ulimit("fsize", limits.fsize_bytes),
                self._ulimit("core", 0),
            ],
            "user": user,
            "working_dir": working_dir,
        }

    def sandbox_options(
        self, limits: Limits, *, tmpfs: dict[str, str], mounts: dict[str, str]
    ) -> dict[str, Any]:
        """Options of a judge's container: the locked-down options, a read-only root file
        system (the writable layer is never written, so it cannot fill the host's disk),
        size- and inode-capped tmpfs mounts where writing is allowed, read-only bind mounts
        of host paths (``host path -> container path``), and a root init that holds only the
        capabilities the supervisor needs (code under test runs as uid 1000 and gets none)."""
        options = self.locked_options(limits, user="0:0", working_dir="/")
        options.update(
            read_only=True,
            cap_add=["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"],
            # No POSIX message queue can be made: they outlive the twin that made them
            # (``ipcrm --all`` of util-linux before 2.39 removes only System V objects), and
            # their names carried a twin's notes to the next one (a red team's 2 KB memory).
            sysctls={"fs.mqueue.queues_max": "0"},
            # The supervisor logs to stderr (its answers go to stdout, read as they come):
            # what the engine keeps of it on the host's disk is bounded.
            log_config=self._log_config(),
            tmpfs=dict(tmpfs),
            volumes={host: {"bind": inside, "mode": "ro"} for host, inside in mounts.items()},
        )
        return options

    def attach_stdout(self, ctr: Any) -> Any:
        """The container's stdout as it is written, chunk by chunk (an iterator with a
        ``close()``), from its start on: attach to a created container before starting it,
        and nothing it writes is missed. The iterator ends when the container stops."""
        try:
            return self.api.attach(ctr.id, stdout=True, stderr=False, stream=True, logs=False)
        except self._errors.APIError as exc:
            raise DockerError(f"cannot attach to container {ctr.id[:12]}: {exc}") from exc

    def _log_config(self) -> Any:
        import docker.types

        return docker.types.LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"})

    def _ulimit(self, name: str, value: int) -> Any:
        import docker.types

        return docker.types.Ulimit(name=name, soft=value, hard=value)

    def reap_orphans(self) -> int:
        """Remove containers that a swe-forge process of this machine made and did not live
        to remove (killed before its clean-up); return how many. Containers of live
        processes, and of other machines sharing the engine, are left alone."""
        here = process_identity(None)
        gone = 0
        try:
            # The low-level listing: one request, labels included (the SDK's list() inspects
            # each container, and one removed meanwhile by another process would fail it).
            found = self.api.containers(all=True, filters={"label": LABEL_PREFIX + ".owner"})
        except Exception:  # a clean-up never fails its caller
            return 0
        for ctr in found:
            owner = str((ctr.get("Labels") or {}).get(LABEL_PREFIX + ".owner", ""))
            boot, _, rest = owner.partition(":")
            pid, _, _start = rest.partition(":")
            if boot != here or not pid.isdigit():
                continue
            if process_identity(int(pid)) == owner:
                continue  # its process is alive
            with suppress(Exception):
                self.api.remove_container(ctr["Id"], force=True, v=True)
                gone += 1
        return gone

    def remove_containers(self, label: str) -> int:
        """Remove every container carrying ``label`` (``key=value``); return how many."""
        gone = 0
        for ctr in self.client.containers.list(all=True, filters={"label": label}):
            with suppress(self._errors.NotFound, self._errors.APIError):
                ctr.remove(force=True, v=True)
                gone += 1
        return gone

    def export(self, image: str) -> Iterator[tuple[tarfile.TarInfo, IO[bytes] | None]]:
        """Every file of an image's file system, as tar members (streamed, not unpacked)."""
        with self.container(image, ["/bin/true"]) as ctr:
            stream = ChunkReader(ctr.export(chunk_size=1 << 20))
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for member in tar:
                    yield member, tar.extractfile(member) if member.isfile() else None

    def copy_out(self, image: str, path: str, dest: Path) -> None:
        """Copy ``path`` from an image to the host directory ``dest`` (which must exist)."""
        with self.container(image, ["/bin/true"]) as ctr:
            try:
                bits, _stat = ctr.get_archive(path)
            except self._errors.NotFound as exc:
                raise DockerError(f"{path} does not exist in {image}") from exc
            buf = ChunkReader(bits)
            with tarfile.open(fileobj=buf, mode="r|") as tar:
                tar.extractall(dest, filter="data")


class ChunkReader(io.RawIOBase):
    """A file-like view of an iterator of byte chunks (for streaming tar reads)."""

    def __init__(self, chunks: Any) -> None:
        self._it = iter(chunks)
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            try:
                self._buf = next(self._it)
            except StopIteration:
                return 0
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def _image_info(data: dict[str, Any]) -> ImageInfo:
    config = data.get("Config") or {}
    return ImageInfo(
        id=str(data["Id"]),
        tags=tuple(sorted(data.get("RepoTags") or ())),
        labels=dict(config.get("Labels") or {}),
        size=int(data.get("Size", 0)),
        created=str(data.get("Created", "")),
    )


def process_identity(pid: int | None) -> str:
    """``<host>-<boot id>:<pid>:<start time>`` of a live process (a pid alone is reused), or
    ``<host>-<boot id>`` for ``None``; for a process that does not exist, ``<boot>:<pid>:``."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = "unknown"
    here = f"{socket.gethostname()}-{boot}"
    if pid is None:
        return here
    try:
        # Field 22 of /proc/PID/stat, after the parenthesised command (which may hold spaces).
        stat = Path(f"/proc/{pid}/stat").read_text()
        start = stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        start = ""
    return f"{here}:{pid}:{start}"
