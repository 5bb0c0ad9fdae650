"""`images ...`: build, list, audit, prune, push, pull, export and import hermetic images."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from swe_forge.cli._app import (
    RichReporter,
    _config,
    _err,
    _out,
    exit_codes,
    images_app,
)
from swe_forge.errors import (
    BuildError,
    InputError,
    PartialFailure,
    UsageError,
)


@images_app.command("base", epilog=exit_codes(12, 13, 17))
def images_base(
    distro: Annotated[
        list[str] | None,
        typer.Option(
            "--distro", help="bullseye (3.9), bookworm (3.11), trixie (3.13); repeatable."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Build the base images (debootstrap + docker import; nothing is pulled)."""
    from swe_forge.commands.images import run_base

    built = run_base(_config(), distro or [], RichReporter(_err, enabled=False))
    if as_json:
        rows = [{"tag": b.tag, "python": b.python, "built": b.built} for b in built]
        print(json.dumps(rows, indent=2, sort_keys=True))
        return
    for b in built:
        state = f"built in {b.seconds:.1f}s" if b.built else "present"
        _out.print(f"{b.tag}  Python {b.python}  {state}", markup=False, soft_wrap=True)


@images_app.command("build", epilog=exit_codes(5, 9, 12, 13, 17, 18))
def images_build(
    candidates: Annotated[Path, typer.Argument(help="candidates.jsonl from `swe-forge mine`.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write one image record per candidate.")
    ] = Path("images.jsonl"),
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these instance ids; repeatable.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Build base, env and instance images for candidates, offline (--network=none).

    Dependencies are resolved as of each base commit's date into a wheelhouse keyed by the
    lock; tasks with the same lock share one env image. Build logs go to the cache's logs/.
    """
    from swe_forge.commands.images import run_build

    result = run_build(
        candidates,
        output,
        config=_config(),
        only=instance,
        reporter=RichReporter(_err, enabled=not as_json and _err.is_terminal),
    )
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        _out.print(
            f"{summary['built']} of {summary['candidates']} candidates built "
            f"({summary['env_images']} env images) in {summary['seconds']}s -> {output}",
            markup=False,
        )
        for reason, n in summary["failure_reasons"].items():
            _out.print(f"  {reason}: {n}", markup=False)
    if result.records and len(result.failed) == len(result.records):
        raise BuildError(
            "no candidate's images could be built", hint=f"see the records in {output}"
        )
    if result.failed:
        raise PartialFailure(
            f"{len(result.failed)} of {len(result.records)} candidates' images could not be built",
            hint=f"the reasons are in {output}; the others were built",
        )


@images_app.command("ls", epilog=exit_codes(12))
def images_ls(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the images swe-forge made, with their kind, size and labels."""
    from swe_forge.commands.images import list_images
    from swe_forge.engine import LABEL_PREFIX

    infos = list_images()
    if as_json:
        print(json.dumps([i.__dict__ for i in infos], indent=2, sort_keys=True, default=list))
        return
    from rich.table import Table

    table = Table()
    for col in ("kind", "tag", "size (MB)", "python", "repository / base commit"):
        table.add_column(col)
    for i in infos:
        lab = i.labels
        table.add_row(
            lab.get(f"{LABEL_PREFIX}.kind", "?"),
            ", ".join(i.tags) or i.id[:19],
            f"{i.size / 1e6:.1f}",
            lab.get(f"{LABEL_PREFIX}.python", ""),
            " ".join(
                (
                    lab.get(f"{LABEL_PREFIX}.repo", ""),
                    lab.get(f"{LABEL_PREFIX}.base-commit", "")[:12],
                )
            ),
        )
    _out.print(table)


@images_app.command("audit", epilog=exit_codes(12, 14, 16, 17, 18))
def images_audit(
    candidates: Annotated[Path, typer.Argument(help="candidates.jsonl (for the test patches).")],
    images: Annotated[
        Path | None, typer.Option("--images", help="images.jsonl from `images build`.")
    ] = None,
    image: Annotated[
        str | None, typer.Option("--image", help="Audit this image (with one --instance).")
    ] = None,
    instance: Annotated[
        list[str] | None,
        typer.Option("--instance", help="Only these instance ids; repeatable."),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write one JSON report per image.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the reports as JSON (exit 14 still tells).")
    ] = False,
) -> None:
    """Check instance images from outside: one scrubbed commit, no test-patch content anywhere,
    the project installed only from /testbed. Exit code 14 when any image fails."""
    from swe_forge.commands.images import run_audit
    from swe_forge.errors import AuditFailure
    from swe_forge.jsonl import write_jsonl

    if images is None and image is None:
        raise UsageError(
            "give --images FILE or --image TAG", hint="see swe-forge images audit --help"
        )
    reports = run_audit(
        candidates, images, image=image, only=instance, reporter=RichReporter(_err, enabled=False)
    )
    if output is not None:
        write_jsonl(output, (json.dumps(r.to_dict(), sort_keys=True) for r in reports))
    failed = [r for r in reports if not r.passed]
    if as_json:
        print(json.dumps([r.to_dict() for r in reports], indent=2, sort_keys=True))
    else:
        _out.print(
            f"{len(reports) - len(failed)} of {len(reports)} images passed the audit",
            markup=False,
        )
    if failed:
        raise AuditFailure(
            f"{len(failed)} image(s) failed the audit: {', '.join(r.instance_id for r in failed)}",
            hint="the findings are listed above" + (f" and in {output}" if output else ""),
        )


@images_app.command("prune", epilog=exit_codes(12))
def images_prune(
    keep: Annotated[
        Path | None, typer.Option("--keep", help="Keep the images named in this images.jsonl.")
    ] = None,
    everything: Annotated[bool, typer.Option("--all", help="Remove base images too.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would go.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Remove swe-forge's instance and env images (and base images with --all)."""
    from swe_forge.commands.images import run_prune

    gone = run_prune(keep=keep, everything=everything, dry_run=dry_run)
    if as_json:
        rows = [{"id": info.id, "tags": list(info.tags)} for info in gone]
        print(json.dumps({"dry_run": dry_run, "images": rows}, indent=2, sort_keys=True))
        return
    verb = "would remove" if dry_run else "removed"
    for info in gone:
        _out.print(f"{verb} {', '.join(info.tags) or info.id}", markup=False, soft_wrap=True)
    _out.print(f"{verb} {len(gone)} image(s)", markup=False)


_RECORDS_FILE_HELP = "images.jsonl from `images build`, or tasks.jsonl from `admit`."


@images_app.command("push", epilog=exit_codes(12, 15, 16, 17, 18))
def images_push(
    path: Annotated[Path, typer.Argument(metavar="FILE", help=_RECORDS_FILE_HELP)],
    registry: Annotated[
        str,
        typer.Option(
            "--registry",
            help="HOST[:PORT]/NAMESPACE of a registry (OCI distribution API v2), e.g. "
            "127.0.0.1:5000/swe-forge. The host is required: a bare NAMESPACE would mean "
            "Docker Hub.",
            envvar="SWE_FORGE_REGISTRY",
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the pinned records here (default: FILE, in place)."
        ),
    ] = None,
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these instance ids; repeatable.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Push the base, env and instance images FILE names, and pin them by digest in FILE.

    Each image goes to HOST/NAMESPACE/<kind>:<its local tag> (shared env and base images
    once), and each record gets a registry block: HOST/NAMESPACE/<kind>@sha256:<digest> and
    the image id a pull must give (image.registry in a task, registry in an image record).
    On another machine, `verify` and `admit` then pull what is missing by digest and refuse
    an image that is not the pinned one (exit 16).

    \b
    Example (scripts/ensure-registry.sh starts a registry on 127.0.0.1:5000):
      swe-forge images push tasks.jsonl --registry 127.0.0.1:5000/swe-forge
      DOCKER_HOST=unix:///other.sock swe-forge verify --tasks tasks.jsonl --gold
    """
    from swe_forge.commands.images import run_push

    result = run_push(
        path,
        registry,
        output=output,
        only=instance,
        reporter=RichReporter(_err, enabled=not as_json and _err.is_terminal, unit="images"),
    )
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return
    _out.print(
        f"pushed {summary['images']} image(s) of {summary['records']} record(s) to "
        f"{summary['registry']} in {summary['seconds']}s; pinned in {output or path}",
        markup=False,
        soft_wrap=True,
    )


@images_app.command("pull", epilog=exit_codes(12, 15, 16))
def images_pull(
    path: Annotated[Path, typer.Argument(metavar="FILE", help=_RECORDS_FILE_HELP)],
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these instance ids; repeatable.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Pull by digest the pinned images FILE names that are not on this engine.

    `verify` and `admit` do this themselves; this fetches ahead of time (a grading machine
    before it goes offline). An image already here is checked by its id and not fetched.
    What arrives must be the pinned image id (and, for an instance, that task's image):
    anything else is refused with exit 16; an unreachable registry is exit 15.
    """
    from swe_forge.commands.images import run_pull

    got = run_pull(
        path,
        only=instance,
        reporter=RichReporter(_err, enabled=not as_json and _err.is_terminal, unit="images"),
    )
    pulled = sorted(ref for ref, _s in got.pulled)
    unpinned = sorted(set(got.unpinned))
    present = len(set(got.present))
    if as_json:
        summary = {"present": present, "pulled": pulled, "not_pinned": unpinned}
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        _out.print(
            f"{len(pulled)} image(s) pulled and verified, {present} already here, "
            f"{len(unpinned)} missing and not pinned",
            markup=False,
        )
    if unpinned:
        raise InputError(
            f"{len(unpinned)} image(s) are not here and {path} pins no registry for them: "
            f"{', '.join(unpinned[:3])}",
            hint="push them from the machine that built them (`images push`), or import them",
        )


@images_app.command("export", epilog=exit_codes(12, 16, 17))
def images_export(
    path: Annotated[Path, typer.Argument(metavar="FILE", help=_RECORDS_FILE_HELP)],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The archive to write (a .tar file).")
    ],
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these instance ids; repeatable.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Write the base, env and instance images FILE names into one OCI archive.

    The archive is an OCI image layout (index.json, blobs/sha256/...) that `docker load`
    also reads (it carries docker's manifest.json): layers uncompressed, shared layers once,
    the same images always give the same bytes. Image ids are kept, so the tasks' pinned
    ids hold on the machine that imports it.

    \b
    Example:
      swe-forge images export tasks.jsonl -o images.tar
      swe-forge images import images.tar      # on the machine without a registry
    """
    from swe_forge.commands.images import run_export

    images = run_export(
        path,
        output,
        only=instance,
        reporter=RichReporter(_err, enabled=not as_json and _err.is_terminal, unit="images"),
    )
    _print_archived(images, f"exported to {output}", as_json)


@images_app.command("import", epilog=exit_codes(12, 16))
def images_import(
    archive: Annotated[
        Path, typer.Argument(help="An archive from `images export` (or docker save).")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Load an image archive into this engine and check every image's id and names.

    The ids are computed from the archive's image configurations and compared with what the
    engine holds after the load (exit 16 on a difference). Set DOCKER_HOST to load into
    another engine.
    """
    from swe_forge.commands.images import run_import

    images = run_import(
        archive, reporter=RichReporter(_err, enabled=not as_json and _err.is_terminal)
    )
    _print_archived(images, f"imported from {archive}", as_json)


def _print_archived(images: list[Any], what: str, as_json: bool) -> None:
    rows = [{"names": list(i.names), "id": i.id, "layers": i.layers} for i in images]
    if as_json:
        print(json.dumps({"images": rows}, indent=2, sort_keys=True))
        return
    for row in rows:
        _out.print(
            f"{row['id']}  {', '.join(row['names']) or '(no name)'}", markup=False, soft_wrap=True
        )
    _out.print(f"{len(rows)} image(s) {what}", markup=False, soft_wrap=True)
