"""Every embedded example repository by language, and the one call that creates any of them.

The builders are imported when their example is asked for, so creating one example loads
only its own module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from swe_forge.example.build import ExampleInfo, create_example


def _python(dest: Path, force: bool) -> ExampleInfo:
    return create_example(dest, force=force)


def _go(dest: Path) -> str:
    from swe_forge.example.polyglot import create_go_example

    return create_go_example(dest)


def _js(dest: Path) -> str:
    from swe_forge.example.js_example import create_js_example

    return create_js_example(dest)


def _rust(dest: Path) -> str:
    from swe_forge.example.rust_example import create_rust_example

    return create_rust_example(dest)


def _java(dest: Path) -> str:
    from swe_forge.example.java_example import create_java_example

    return create_java_example(dest)


#: The examples other than Python's textkit: language -> (owner/name, builder, PR count).
LANGUAGE_EXAMPLES: dict[str, tuple[str, Callable[[Path], str], int]] = {
    "go": ("swe-forge/gokit", _go, 5),
    "java": ("swe-forge/javakit", _java, 5),
    "js": ("swe-forge/jskit", _js, 5),
    "rust": ("swe-forge/rustkit", _rust, 5),
}


def _squash(language: str) -> Callable[[Path, bool], ExampleInfo]:
    repo, build, prs = LANGUAGE_EXAMPLES[language]

    def create(dest: Path, force: bool) -> ExampleInfo:
        from swe_forge.example.build import _prepare_destination

        _prepare_destination(dest, force)
        head = build(dest)
        return ExampleInfo(path=dest, repo=repo, head_sha=head, default_branch="main", num_prs=prs)

    return create


#: Every example by language (the default first): ``(dest, force) -> ExampleInfo``.
EXAMPLES: dict[str, Callable[[Path, bool], ExampleInfo]] = {
    "python": _python,
    **{language: _squash(language) for language in LANGUAGE_EXAMPLES},
}


def create_language_example(language: str, dest: Path, *, force: bool = False) -> ExampleInfo:
    """Create the example repository of ``language`` at ``dest`` (new or empty, or emptied
    with ``force``); Python's is textkit (:func:`~swe_forge.example.create_example`)."""
    if language not in EXAMPLES:
        from swe_forge.errors import UsageError

        raise UsageError(f"no example for {language!r}", hint=f"one of {', '.join(EXAMPLES)}")
    try:
        return EXAMPLES[language](Path(dest), force)
    except OSError as exc:
        from swe_forge.errors import file_system_error, output_error

        # Files written straight by the builders (a full disk mid-way): the folder is the
        # output, and naming it is more use than "cannot write None".
        mapped = file_system_error(exc)
        if mapped is None:
            raise
        raise output_error(exc, exc.filename or dest) from exc
