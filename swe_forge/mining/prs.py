"""Recognise merged pull requests in commit messages, and write problem statements.

Two shapes are recognised on the first-parent history of the default branch:

- a merge commit (two parents) whose subject is GitHub's ``Merge pull request #N from
  owner/branch``; the PR title and body follow after a blank line;
- a squash merge (one parent) whose subject ends with `` (#N)``; the body follows.

GitLab's ``See merge request group/project!N`` trailer is recognised on merge commits too, and so
are the merge bots' merge commits: homu's (bors of rust-lang and servo) ``Auto merge of #N -
owner:branch, r=reviewer`` with the PR title and body after a blank line, and bors-ng's
``Merge #N`` with ``N: title r=... a=...`` as the first line of the body (a batch of several
PRs in one merge is not one PR and is not recognised).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MERGE_PR = re.compile(r"^Merge pull request #(\d+) from (\S+)")
_SQUASH = re.compile(r"^(?P<title>.*\S)\s*\(#(?P<num>\d+)\)\s*$")
_LOCAL_PR_MERGE = re.compile(r"^Merge branch '(?:pr|pull)/(\d+)'")
#: homu: "Auto merge of #N - owner:branch, r=reviewer" (the branch part may be missing).
_HOMU = re.compile(r"^Auto merge of #(\d+)(?:\s+-\s+(\S+?),?(?:\s|$))?")
#: bors-ng: subject "Merge #N" (one PR: "Merge #1 #2" is a batch), body "N: title r=x a=y".
_BORS_NG = re.compile(r"^Merge #(\d+)\s*$")
_BORS_NG_TITLE = re.compile(r"^(\d+):\s*(?P<title>.*?)(?:\s+[ra]=\S+)*\s*$")
_GITLAB = re.compile(r"^See merge request \S+!(\d+)\s*$", re.MULTILINE)
#: Commit trailers: attribution (``Co-authored-by:``, ``Signed-off-by:``, ``Assisted-by:`` and
#: every other ``*-by:``) and review-system ids; they say who, never what.
_TRAILER = re.compile(
    r"^[ \t]*(?:[A-Za-z]+(?:-[A-Za-z]+)*-by|Change-Id|Reviewed-on|Requested by|Cc)[ \t]*:.*$",
    re.IGNORECASE | re.MULTILINE,
)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
#: A comment left open (a template cut short): everything after it is template.
_OPEN_HTML_COMMENT = re.compile(r"<!--.*\Z", re.DOTALL)
_DETAILS = re.compile(r"<details>.*?</details>", re.DOTALL | re.IGNORECASE)
#: Lines that say nothing about the problem: GitHub's trailer separator, bot boilerplate
#: (pre-commit.ci), checklist items of PR templates, an empty "Fixes #" template line, tool
#: signatures ("Generated with ...") and coding-assistant banners. A bullet in front (a squash
#: merge lists its commits as ``* ...``) does not save them.
_NOISE_LINE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:"
    r"-{5,}"
    r"|(?:\d+[.)]\s*)?\[[ xX]\]\s.*"
    r"|\[pre-commit\.ci\].*"
    r"|for more information, see https?://pre-commit\.ci.*"
    r"|(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s*#\s*(?:\(issue\))?"
    r"|\W*(?:generated|created|written|made|built|authored|co-authored)\s+(?:with|by|using|in)\s+"
    r"\W*(?:claude|copilot|github\s+copilot|cursor|chatgpt|codex|devin|aider|gemini|jules"
    r"|windsurf|openhands|an?\s+ai\b|ai\b).*"
    r"|\W*(?:you can make copilot smarter|let copilot coding agent|open in (?:cursor|web)\b).*"
    r")\s*$",
    re.IGNORECASE,
)
#: Links to a coding assistant's session (the conversation that wrote the change): the agent
#: cannot open them, and they identify a tool, not a problem. The whole line goes.
_SESSION_LINK = re.compile(
    r"https?://(?:www\.)?(?:"
    r"claude\.ai/(?:code|chat)/\S*"
    r"|chatgpt\.com/(?:codex|c|s|share)/\S*"
    r"|chat\.openai\.com/\S*"
    r"|(?:\w+\.)?cursor\.(?:com|sh)/(?:agents|background-agent|chat)\S*"
    r"|app\.devin\.ai/\S*"
    r"|jules\.google\.com/\S*"
    r"|github\.com/copilot/\S*"
    r"|gh\.io/copilot\S*"
    r")",
    re.IGNORECASE,
)
#: Squash-merge bullets that only record review churn ("* fix tests", "* changelog").
_CHURN_BULLET = re.compile(
    r"^\*\s+(?:fix(?:up)?|lint(?:ing)?|typo|flip|format(?:ting)?|review|address(?:ed)? review.*"
    r"|wip|oops|update|tweak|cleanup|pre-commit.*|apply suggestions? from code review.*"
    r"|merge (?:remote-tracking )?branch .*"
    r"|(?:(?:add|update|fix|remove|small|more)\s+)?(?:the\s+)?"
    r"(?:changelog|change\s*log|news|docs?|docstrings?|tests?|typing|types|mypy|ruff|lint"
    r"|coverage|todo|comments?|typos?)(?:\s+(?:entry|errors?|issues?|fix(?:es)?|part\s+\d+)){0,2}"
    r")[.!]?\s*$",
    re.IGNORECASE,
)
#: A Markdown heading (a PR template's section title).
_HEADING = re.compile(r"^\s*#{1,6}\s+\S")
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
        m = _HOMU.match(subject)
        if m:
            title, _, body = rest.strip().partition("\n")
            branch = (m.group(2) or "").rstrip(",")
            return PullRequest(
                int(m.group(1)), title.strip() or subject, body.strip(), "merge", branch
            )
        m = _BORS_NG.match(subject)
        if m:
            first, _, body = rest.strip().partition("\n")
            t = _BORS_NG_TITLE.match(first.strip())
            if t and t.group(1) == m.group(1):
                return PullRequest(int(m.group(1)), t.group("title"), body.strip(), "merge")
            return PullRequest(int(m.group(1)), first.strip() or subject, body.strip(), "merge")
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
    boilerplate (pre-commit.ci), checklist items, coding-assistant signatures and session
    links, review-churn bullets of squash merges, template headings left with nothing under
    them, a first bullet that repeats the title, and trailing space.
    """
    text = _HTML_COMMENT.sub("", text)
    text = _OPEN_HTML_COMMENT.sub("", text)
    text = _DETAILS.sub("", text)
    text = _TRAILER.sub("", text)
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    lines = [
        ln
        for ln in lines
        if not _NOISE_LINE.match(ln)
        and not _CHURN_BULLET.match(ln)
        and not _SESSION_LINK.search(ln)
    ]
    while True:  # a section whose only content was an emptied subsection is empty too
        kept = _drop_empty_sections(lines)
        if len(kept) == len(lines):
            break
        lines = kept
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if title and first is not None and lines[first].lstrip("* ").strip() == title.strip():
        del lines[first]
    out = "\n".join(lines).strip()
    return re.sub(r"\n{3,}", "\n\n", out)


def _drop_empty_sections(lines: list[str]) -> list[str]:
    """Headings with nothing under them before the next heading of the same or a higher level
    (or the end): a template's sections whose content was a comment or a checklist, now
    removed. A heading whose subsections have content stays."""
    out: list[str] = []
    for i, line in enumerate(lines):
        level = _heading_level(line)
        if level:
            following = next((ln for ln in lines[i + 1 :] if ln.strip()), None)
            if following is None or 0 < _heading_level(following) <= level:
                continue
        out.append(line)
    return out


def _heading_level(line: str) -> int:
    """1..6 for a Markdown heading, 0 for any other line."""
    if not _HEADING.match(line):
        return 0
    stripped = line.lstrip()
    return len(stripped) - len(stripped.lstrip("#"))


def problem_statement(pr: PullRequest) -> str:
    """The statement from the PR's own title and body."""
    title = pr.title.strip()
    body = clean_text(pr.body, title)
    return f"{title}\n\n{body}".strip() + "\n" if body else f"{title}\n"


def changed_by_cleaning(raw: str, cleaned: str) -> bool:
    """Did cleaning remove anything but white space from ``raw``?"""
    return raw.split() != cleaned.split()


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
