"""Optional GitHub REST API source: linked issues as problem statements, comments as hints.

Never required: without ``--github`` the statement comes from the PR's title and body in the
commit message. With it, for each candidate PR:

1. ``GET /repos/{o}/{r}/pulls/{n}``: the PR's title, body and ``created_at``;
2. closing keywords in the PR body and commit message (``Fixes #12``) name the linked issues;
3. ``GET /repos/{o}/{r}/issues/{k}``: each issue's title and body become the statement;
4. ``GET /repos/{o}/{r}/issues/{k}/comments`` (paginated by ``Link``): comments made before the
   PR was opened become ``hints_text``.

The token is read from ``$GITHUB_TOKEN`` (or ``$GH_TOKEN``). Rate limits are honoured
(``Retry-After`` or ``X-RateLimit-Reset``, bounded), 5xx answers retried with back-off.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from swe_forge.config import GitHubConfig
from swe_forge.errors import RemoteError
from swe_forge.mining.prs import changed_by_cleaning, clean_text, linked_issues

_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')
#: Never sleep longer than this for a rate limit; fail instead, so a batch job is not stuck.
_MAX_RATE_WAIT = 300.0


@dataclass(frozen=True)
class GitHubStatement:
    """What the GitHub source contributes to a candidate."""

    problem_statement: str
    hints_text: str
    source: str  # "github_issue" | "github_pr"
    linked_issues: tuple[int, ...]
    pr_created_at: str
    #: Cleaning removed tool noise from the issue or PR text.
    cleaned: bool = False


class GitHubClient:
    """A small client for the few REST endpoints mining needs."""

    def __init__(self, config: GitHubConfig, token: str | None = None) -> None:
        self.config = config
        self.base = config.api_url.rstrip("/")
        self.token = (
            token
            if token is not None
            else (os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN"))
        )
        self.requests_made = 0

    def _request(self, url: str) -> tuple[Any, dict[str, str]] | None:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "swe-forge",
        }
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        delay = 1.0
        for attempt in range(self.config.max_retries + 1):
            req = urllib.request.Request(url, headers=headers)
            self.requests_made += 1
            try:
                with urllib.request.urlopen(req, timeout=self.config.timeout_seconds) as resp:
                    body = resp.read()
                    return json.loads(body.decode("utf-8")), dict(resp.headers.items())
            except urllib.error.HTTPError as exc:
                if exc.code == 404:
                    return None
                hdrs = dict(exc.headers.items()) if exc.headers else {}
                if exc.code in (403, 429) and (
                    hdrs.get("X-RateLimit-Remaining") == "0" or "Retry-After" in hdrs
                ):
                    wait = _rate_wait(hdrs)
                    if wait > _MAX_RATE_WAIT or attempt == self.config.max_retries:
                        raise RemoteError(
                            f"GitHub API rate limit reached at {url}",
                            hint="set GITHUB_TOKEN, or run again later",
                        ) from exc
                    time.sleep(wait)
                    continue
                if exc.code >= 500 and attempt < self.config.max_retries:
                    time.sleep(delay)
                    delay *= 2
                    continue
                if exc.code == 401:
                    raise RemoteError(
                        "GitHub API refused the token (401)", hint="check $GITHUB_TOKEN"
                    ) from exc
                raise RemoteError(f"GitHub API error {exc.code} at {url}") from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt < self.config.max_retries:
                    time.sleep(delay)
                    delay *= 2
                    continue
                raise RemoteError(
                    f"cannot reach the GitHub API at {self.base}: {exc}",
                    hint="check the network, or mine without --github",
                ) from exc
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise RemoteError(f"GitHub API answered with invalid JSON at {url}") from exc
        raise RemoteError(f"GitHub API: giving up on {url}")  # pragma: no cover

    def get(self, path: str) -> Any:
        """GET one resource (None on 404)."""
        got = self._request(f"{self.base}{path}")
        return None if got is None else got[0]

    def get_all(self, path: str) -> list[Any]:
        """GET a paginated list, following ``Link: rel="next"``."""
        url: str | None = f"{self.base}{path}{'&' if '?' in path else '?'}per_page=100"
        items: list[Any] = []
        pages = 0
        while url and pages < 50:
            got = self._request(url)
            if got is None:
                break
            data, headers = got
            if isinstance(data, list):
                items.extend(data)
            m = _NEXT.search(headers.get("Link", "") or headers.get("link", ""))
            url = m.group(1) if m else None
            pages += 1
        return items

    def statement_for(
        self, repo: str, pr_number: int, commit_message: str
    ) -> GitHubStatement | None:
        """The problem statement and hints for a PR, or None when the PR is unknown."""
        pr = self.get(f"/repos/{repo}/pulls/{pr_number}")
        if not isinstance(pr, dict):
            return None
        pr_created = str(pr.get("created_at") or "")
        text = f"{pr.get('body') or ''}\n{commit_message}"
        issues = tuple(n for n in linked_issues(text, repo) if n != pr_number)
        parts: list[str] = []
        raw_parts: list[str] = []
        hints: list[str] = []
        used: list[int] = []
        for number in issues:
            issue = self.get(f"/repos/{repo}/issues/{number}")
            if not isinstance(issue, dict) or "pull_request" in issue:
                continue  # a PR, not an issue
            used.append(number)
            raw_parts.append(f"{issue.get('title') or ''}\n{issue.get('body') or ''}")
            parts.append(
                f"{issue.get('title') or ''}\n{clean_text(issue.get('body') or '')}".strip()
            )
            for c in self.get_all(f"/repos/{repo}/issues/{number}/comments"):
                created = str(c.get("created_at") or "")
                # ISO 8601 strings in the same format compare correctly as text.
                if pr_created and created and created < pr_created:
                    hints.append(clean_text(str(c.get("body") or "")))
        if parts:
            statement = "\n\n".join(parts).strip() + "\n"
            return GitHubStatement(
                statement,
                "\n\n".join(h for h in hints if h),
                "github_issue",
                tuple(used),
                pr_created,
                changed_by_cleaning("\n\n".join(raw_parts), statement),
            )
        title = str(pr.get("title") or "")
        raw_body = str(pr.get("body") or "")
        body = clean_text(raw_body)
        statement = (f"{title}\n\n{body}".strip() if body else title) + "\n"
        return GitHubStatement(
            statement,
            "",
            "github_pr",
            (),
            pr_created,
            changed_by_cleaning(f"{title}\n\n{raw_body}", statement),
        )


def _rate_wait(headers: dict[str, str]) -> float:
    if "Retry-After" in headers:
        try:
            return float(headers["Retry-After"])
        except ValueError:
            return 60.0
    reset = headers.get("X-RateLimit-Reset")
    if reset:
        try:
            return max(0.0, float(reset) - time.time()) + 1.0
        except ValueError:
            pass
    return 60.0
