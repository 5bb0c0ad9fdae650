"""The Python runner's configuration a candidate patch may not change: pytest's sections of
``setup.cfg``, ``tox.ini``, ``pytest.ini`` and ``pyproject.toml`` (read as INI or TOML text).
"""

from __future__ import annotations

from typing import Any


def runner_settings_changes(texts: dict[str, Any]) -> list[str]:
    """pytest settings a candidate changed, by parsing the files before and after.

    ``pyproject.toml``: the ``[tool.pytest...]`` tables as TOML sees them (pytest's own
    parser), so an escaped key (``"\\u0061ddopts"``) is the key it spells. INI files
    (``setup.cfg``, ``tox.ini``, ``pytest.ini``): the raw text of their pytest sections.
    """
    import tomllib

    found = []
    for path, pair in sorted(texts.items()):
        before, after = pair.get("before"), pair.get("after")
        if path.rsplit("/", 1)[-1] == "pyproject.toml":

            def pytest_table(text: str | None) -> Any:
                if text is None:
                    return None
                try:
                    return tomllib.loads(text).get("tool", {}).get("pytest")
                except (tomllib.TOMLDecodeError, AttributeError):
                    return "unparsable"

            if pytest_table(before) != pytest_table(after):
                found.append(f"{path}: the patch changes pytest's settings")
        elif _ini_pytest_sections(before) != _ini_pytest_sections(after):
            found.append(f"{path}: the patch changes pytest's settings")
    return found


def _ini_pytest_sections(text: str | None) -> list[str]:
    """The raw lines of every section that pytest could read as its own (``[pytest]``,
    ``[tool:pytest]``, any spelling with "pytest" in the header). Generous where pytest's
    line parser is strict: a section starts at any bracketed line naming pytest, and ends only
    at a header in column 0 (an indented bracket is a continuation line to pytest)."""
    out: list[str] = []
    inside = False
    for line in (text or "").splitlines():
        stripped = line.strip().lstrip("\ufeff").strip()
        if stripped.startswith("[") and "pytest" in stripped.lower():
            inside = True
        elif line.lstrip("\ufeff")[:1] == "[":
            inside = False
        if inside:
            out.append(line)
    return out
