"""``swe-forge report --html OUT.html``: the funnel, yields, rejections, models and timings as
one self-contained page.

The page needs nothing but a browser: the styles are inline, the charts are inline SVG drawn
here (no script, no font, no network). Everything on it is computed from the same records as
``report --by-repo`` (:mod:`swe_forge.commands.report`), plus verification results for the
per-model table and image records (``images build``'s output), when given, for the ecosystem
of the candidates that were not admitted.
"""

from __future__ import annotations

import html
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from swe_forge import __version__
from swe_forge.commands.report import funnel, funnel_by_repo, unique_records
from swe_forge.ecosystems import RUNNERS as RUNNER_LANGUAGES

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d2430;
max-width:1100px}h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid #d8dee8;padding-bottom:4px}.muted{color:#5b6577}table{border-collapse:
collapse;margin:6px 0}th,td{padding:4px 10px;border-bottom:1px solid #e6eaf0;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f3f5f9}td.reasons,th.reasons{text-align:left;
color:#5b6577}.cards{display:flex;gap:12px;flex-wrap:wrap}.card{border:1px solid #d8dee8;
border-radius:8px;padding:10px 14px;min-width:120px}.card b{display:block;font-size:22px}
"""
_BAR = "#3b6fd8"
_BAR2 = "#2e9e6b"
_RED = "#d0543b"


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


def _bars(rows: list[tuple[str, int]], color: str, width: int = 520) -> str:
    """A horizontal bar chart as inline SVG: one labelled bar per row, scaled to the largest."""
    if not rows:
        return '<p class="muted">nothing to show</p>'
    top = max(v for _k, v in rows) or 1
    height = 24 * len(rows) + 6
    out = [f'<svg width="{width + 260}" height="{height}" role="img">']
    for i, (label, value) in enumerate(rows):
        y = 4 + 24 * i
        w = max(1, round(width * value / top)) if value else 0
        out.append(
            f'<text x="0" y="{y + 15}" font-size="13">{_esc(label)}</text>'
            f'<rect x="220" y="{y}" width="{w}" height="18" fill="{color}" rx="2"/>'
            f'<text x="{226 + w}" y="{y + 14}" font-size="12">{value}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _table(head: list[str], rows: list[list[str]], reasons_col: int | None = None) -> str:
    cells = "".join(
        f'<th class="reasons">{_esc(h)}</th>' if i == reasons_col else f"<th>{_esc(h)}</th>"
        for i, h in enumerate(head)
    )
    body = []
    for row in rows:
        tds = "".join(
            f'<td class="reasons">{_esc(c)}</td>' if i == reasons_col else f"<td>{_esc(c)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{tds}</tr>")
    return f"<table><tr>{cells}</tr>{''.join(body)}</table>"


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.1f}" if values else "-"


def _p90(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]:.1f}"


def report_data(files: list[Path]) -> dict[str, Any]:
    """Everything the page shows, as plain data (also what the tests check)."""
    flow = funnel(files)
    repos = funnel_by_repo(files)
    language_of: dict[str, str] = {}
    admit_seconds: dict[str, list[float]] = {}
    per_language: dict[str, Counter[str]] = {}
    models: dict[str, Counter[str]] = {}
    verify_seconds: dict[str, list[float]] = {}
    rejected: list[tuple[str, str]] = []
    for kind, data in unique_records(files):
        iid = str(data.get("instance_id") or "")
        if kind == "images":
            # Every adapter but Python's names itself in the recipe (Python's predates it).
            recipe = data.get("recipe") or {}
            language_of.setdefault(iid, str(recipe.get("ecosystem") or "python"))
        elif kind == "task":
            runner = str((data.get("harness") or {}).get("runner") or "pytest")
            lang = RUNNER_LANGUAGES.get(runner, runner)
            language_of[iid] = lang
            per_language.setdefault(lang, Counter())["admitted"] += 1
            seconds = (data.get("gates") or {}).get("seconds")
            if isinstance(seconds, int | float):
                admit_seconds.setdefault(lang, []).append(float(seconds))
        elif kind == "rejection" and data.get("stage") == "admit":
            rejected.append((iid, str(data.get("reason"))))
        elif kind == "verify_result":
            model = str(data.get("model_name_or_path"))
            row = models.setdefault(model, Counter())
            row["predictions"] += 1
            row[str(data.get("status"))] += 1
            total = (data.get("timings") or {}).get("total")
            if isinstance(total, int | float):
                verify_seconds.setdefault(model, []).append(float(total))
    for iid, reason in rejected:
        lang = language_of.get(iid, "unknown")
        per_language.setdefault(lang, Counter())["rejected"] += 1
        if reason != "build_failed":
            per_language[lang]["environments"] += 1
    for row in per_language.values():
        row["judged"] = row["admitted"] + row["rejected"]
        row["environments"] += row["admitted"]
    return {
        "funnel": flow,
        "repos": repos,
        "languages": {
            k: dict(v) | {"admit_seconds": admit_seconds.get(k, [])}
            for k, v in sorted(per_language.items())
        },
        "models": {
            k: dict(v) | {"seconds": verify_seconds.get(k, [])} for k, v in sorted(models.items())
        },
    }


def render_html(files: list[Path]) -> str:
    """The page for the records in ``files`` (deterministic: same files, same bytes)."""
    data = report_data(files)
    flow, repos = data["funnel"], data["repos"]
    total = repos["total"]
    cards = [
        ("PRs mined", flow["prs"]),
        ("candidates", flow["candidates"]),
        ("environments", total["environments"]),
        ("admitted", flow["admitted"]),
        ("yield", _pct(flow["admitted"], flow["candidates_judged"])),
        (
            "gold 1.0",
            f"{total['gold_verified']}/{total['gold_run']}" if total["gold_run"] else "-",
        ),
    ]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>swe-forge report</title><style>{_CSS}</style></head><body>",
        "<h1>swe-forge report</h1>",
        f'<p class="muted">swe-forge {_esc(__version__)}; {len(repos["repos"])} repositories</p>',
        '<div class="cards">'
        + "".join(f'<div class="card"><b>{_esc(v)}</b>{_esc(k)}</div>' for k, v in cards)
        + "</div>",
        "<h2>Funnel</h2>",
        _bars(
            [
                ("PRs mined", flow["prs"]),
                ("candidates", flow["candidates"]),
                ("candidates judged", flow["candidates_judged"]),
                ("environments built", total["environments"]),
                ("admitted", flow["admitted"]),
                ("gold patches at 1.0", total["gold_verified"]),
            ],
            _BAR,
        ),
        "<h2>Rejection reasons</h2>",
        "<h3>mine</h3>",
        _bars(sorted(flow["stages"][0]["rejected"].items(), key=lambda kv: (-kv[1], kv[0])), _RED),
        "<h3>admit</h3>",
        _bars(sorted(flow["stages"][1]["rejected"].items(), key=lambda kv: (-kv[1], kv[0])), _RED),
        "<h2>Per repository</h2>",
        _table(
            [
                "repository",
                "PRs",
                "candidates",
                "environment",
                "admitted (yield)",
                "gold 1.0",
                "rejections",
            ],
            [
                [
                    r["repo"],
                    str(r["prs"]),
                    str(r["candidates"]),
                    f"{r['environments']}/{r['judged']}",
                    f"{r['admitted']} ({_pct(r['admitted'], r['judged'])})",
                    f"{r['gold_verified']}/{r['gold_run']}" if r["gold_run"] else "-",
                    ", ".join(f"{k} {v}" for k, v in r["rejected"].items()) or "-",
                ]
                for r in [*repos["repos"], total]
            ],
            reasons_col=6,
        ),
        "<h2>Per language</h2>",
        _table(
            [
                "language",
                "judged",
                "environments",
                "admitted (yield)",
                "admission s (median)",
                "p90",
            ],
            [
                [
                    lang,
                    str(row.get("judged", 0)),
                    str(row.get("environments", 0)),
                    f"{row.get('admitted', 0)} ({_pct(row.get('admitted', 0), row['judged'])})",
                    _median(row["admit_seconds"]),
                    _p90(row["admit_seconds"]),
                ]
                for lang, row in data["languages"].items()
            ],
        ),
        _bars([(k, int(v.get("admitted", 0))) for k, v in data["languages"].items()], _BAR2),
        "<h2>Per model</h2>",
    ]
    if data["models"]:
        parts.append(
            _table(
                [
                    "model",
                    "predictions",
                    "resolved",
                    "rate",
                    "verify s (median)",
                    "p90",
                    "statuses",
                ],
                [
                    [
                        model,
                        str(row["predictions"]),
                        str(row.get("resolved", 0)),
                        _pct(
                            row.get("resolved", 0),
                            row["predictions"] - row.get("infra_error", 0),
                        ),
                        _median(row["seconds"]),
                        _p90(row["seconds"]),
                        ", ".join(
                            f"{k} {v}"
                            for k, v in sorted(row.items())
                            if k not in ("predictions", "seconds")
                        ),
                    ]
                    for model, row in data["models"].items()
                ],
                reasons_col=6,
            )
        )
        parts.append(
            _bars([(m, int(r.get("resolved", 0))) for m, r in data["models"].items()], _BAR2)
        )
    else:
        parts.append('<p class="muted">no verification results given</p>')
    parts.append("</body></html>\n")
    return "".join(parts)
