"""Recognise merged pull requests in commit messages, and write problem statements.

Two shapes are recognised on the first-parent history of the default branch:

- a merge commit (two parents) whose subject is GitHub's ``Merge pull request #N from
  owner/branch``; the PR title and body follow after a blank line;
- a squash merge (one parent) whose subject ends with `` (#N)``; the body follows.

GitLab's ``See merge request group/project!N`` trailer is recognised on merge commits too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MERGE_PR = re.compile(r"^Merge pull request #(\d+) from (\S+)")
_SQUASH = re.compile(r"^(?P<title>.*\S)\s*\(#(?P<num>\d+)\)\s*$")
_LOCAL_PR_MERGE = re.compile(r"^Merge branch '(?:pr|pull)/(\d+)'")
_GITLAB = re.compile(r"^See merge request \S+!(\d+)\s*$", re.MULTILINE)
_TRAILER = re.compile(
    r"^(Co-authored-by|Signed-off-by|Reviewed-by|Acked-by|Tested-by|Reported-by|Change-Id):.*$",
    re.IGNORECASE | re.MULTILINE,
)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_DETAILS = re.compile(r"<details>.*?</details>", re.DOTALL | re.IGNORECASE)
#: Lines that say nothing about the problem: GitHub's trailer separator, bot boilerplate,
#: checklist items, tool signatures.
_NOISE_LINE = re.compile(
    r"^\s*(?:-{5,}|[-*]\s*\[[ xX]\]\s.*|\[pre-commit\.ci\].*"
    r"|for more information, see https://pre-commit\.ci.*|.*Generated with \[?Claude Code.*)\s*$",
    re.IGNORECASE,
)
#: Squash-merge bullets that only record review churn.
_CHURN_BULLET = re.compile(
    r"^\*\s+(?:fix(?:up)?|lint(?:ing)?|typo|flip|format(?:ting)?|review|address(?:ed)? review.*"
    r"|wip|oops|update|tweak|cleanup|pre-commit.*|apply suggestions? from code review.*)[.!]?\s*$",
    re.IGNORECASE,
)
_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+"
    r"(?:(?P<repo>[\w.-]+/[\w.-]+))?#(?P<num>\d+)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PullRequest:
    """A merged PR as seen in the history."""

    number: int
    title: str
    body: str
    kind: str  # "merge" | "squash"
    branch: str = ""


def parse_pr(message: str, parent_count: int) -> PullRequest | None:
    """Recognise a merged PR from a commit message and its parent count, else None."""
    lines = message.replace("\r\n", "\n").split("\n")
    subject = lines[0].strip() if lines else ""
    rest = "\n".join(lines[1:]).strip("\n")
    if parent_count == 2:
        m = _MERGE_PR.match(subject)
        if m:
            title, _, body = rest.strip().partition("\n")
            return PullRequest(int(m.group(1)), title.strip(), body.strip(), "merge", m.group(2))
        gl = _GITLAB.search(message)
        if gl:
            title, _, body = rest.strip().partition("\n")
            body = _GITLAB.sub("", body)
            return PullRequest(int(gl.group(1)), title.strip() or subject, body.strip(), "merge")
        # GitHub's "pull request title" merge message: "Title (#N)" on a merge commit.
        m = _SQUASH.match(subject)
        if m:
            return PullRequest(int(m.group("num")), m.group("title"), rest.strip(), "merge")
        # A maintainer's local merge of a fetched PR branch: "Merge branch 'pr/N'".
        m = _LOCAL_PR_MERGE.match(subject)
        if m:
            title, _, body = rest.strip().partition("\n")
            return PullRequest(int(m.group(1)), title.strip() or subject, body.strip(), "merge")
        return None
    if parent_count == 1:
        m = _SQUASH.match(subject)
        if m:
            return PullRequest(int(m.group("num")), m.group("title"), rest.strip(), "squash")
    return None


def clean_text(text: str, title: str = "") -> str:
    """Strip what says nothing about the problem.

    HTML comments and ``<details>`` blocks (PR templates, pasted logs), commit trailers, bot
    boilerplate, checklist items, review-churn bullets of squash merges, a first bullet that
    repeats the title, and trailing space.
    """
    text = _HTML_COMMENT.sub("", text)
    text = _DETAILS.sub("", text)
    text = _TRAILER.sub("", text)
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    lines = [ln for ln in lines if not _NOISE_LINE.match(ln) and not _CHURN_BULLET.match(ln)]
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if title and first is not None and lines[first].lstrip("* ").strip() == title.strip():
        del lines[first]
    out = "\n".join(lines).strip()
    return re.sub(r"\n{3,}", "\n\n", out)


def problem_statement(pr: PullRequest) -> str:
    """The statement from the PR's own title and body."""
    title = pr.title.strip()
    body = clean_text(pr.body, title)
    return f"{title}\n\n{body}".strip() + "\n" if body else f"{title}\n"


def linked_issues(text: str, repo: str) -> tuple[int, ...]:
    """Issue numbers a PR closes by GitHub's closing keywords (same repository only)."""
    found: list[int] = []
    for m in _CLOSING.finditer(text):
        other = m.group("repo")
        if other and other.lower() != repo.lower():
            continue
        num = int(m.group("num"))
        if num not in found:
            found.append(num)
    return tuple(found)
