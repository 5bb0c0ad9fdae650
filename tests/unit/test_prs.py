"""Recognising merged PRs in commit messages, and problem statements."""

from __future__ import annotations

from swe_forge.mining.prs import (
    changed_by_cleaning,
    clean_text,
    linked_issues,
    parse_pr,
    problem_statement,
)


def test_github_merge_commit() -> None:
    msg = "Merge pull request #42 from alice/fix-parse\n\nFix parsing of empty input\n\nIt crashed.\nBadly.\n"
    pr = parse_pr(msg, 2)
    assert pr is not None
    assert (pr.number, pr.title, pr.body, pr.kind, pr.branch) == (
        42,
        "Fix parsing of empty input",
        "It crashed.\nBadly.",
        "merge",
        "alice/fix-parse",
    )


def test_merge_message_on_single_parent_is_not_a_pr() -> None:
    assert parse_pr("Merge pull request #42 from alice/x\n\nT\n", 1) is None


def test_squash_merge() -> None:
    pr = parse_pr("Handle None in slugify (#17)\n\n* first\n\nCo-authored-by: Bob <b@x>\n", 1)
    assert pr is not None
    assert (pr.number, pr.title, pr.kind) == (17, "Handle None in slugify", "squash")
    assert "Co-authored-by" not in problem_statement(pr)


def test_plain_commits_and_local_merges_are_not_prs() -> None:
    assert parse_pr("Fix a typo\n", 1) is None
    assert parse_pr("Merge branch 'dev'\n", 2) is None
    assert parse_pr("Bump version to 1.2 (#draft)\n", 1) is None
    assert parse_pr("Initial commit\n", 0) is None


def test_gitlab_merge_request() -> None:
    msg = "Merge branch 'fix' into 'main'\n\nFix the thing\n\nSee merge request group/proj!7\n"
    pr = parse_pr(msg, 2)
    assert pr is not None and pr.number == 7 and pr.title == "Fix the thing"


def test_problem_statement_strips_template_comments() -> None:
    pr = parse_pr("Fix x (#3)\n\n<!-- Describe your change -->\nThe bug: x.\n", 1)
    assert pr is not None
    assert problem_statement(pr) == "Fix x\n\nThe bug: x.\n"
    assert clean_text("a  \n\n\n\nb") == "a\n\nb"


def test_linked_issues_closing_keywords() -> None:
    text = "Fixes #12, closes acme/app#13 and resolves other/repo#14. Refs #15. fixed: #16"
    assert linked_issues(text, "acme/app") == (12, 13, 16)


def test_merge_commit_with_pr_title_subject() -> None:
    pr = parse_pr("support FIPS builds without SHA-1 (#378)\n\nLong body.\n", 2)
    assert pr is not None and (pr.number, pr.title, pr.kind) == (
        378,
        "support FIPS builds without SHA-1",
        "merge",
    )


def test_local_merge_of_pr_branch() -> None:
    pr = parse_pr("Merge branch 'pr/512'\n\nFix the frobnicator\n", 2)
    assert pr is not None and pr.number == 512 and pr.title == "Fix the frobnicator"


def test_no_space_before_number() -> None:
    pr = parse_pr("Remove the Client(#377)\n", 1)
    assert pr is not None and pr.number == 377 and pr.title == "Remove the Client"


def test_noise_is_stripped() -> None:
    body = (
        "* Fix the parser for empty input\n* fix\n* Linting\n* Apply suggestions from code review\n"
        "* Handle the None case too\n\n"
        "- [x] I added tests\n- [ ] I updated the changelog\n"
        "<details><summary>log</summary>\nTraceback...\n</details>\n"
        "[pre-commit.ci] auto fixes from pre-commit.com hooks\n\n"
        "for more information, see https://pre-commit.ci\n"
        "🤖 Generated with [Claude Code](https://claude.ai/code)\n"
        "---------\n\nCo-authored-by: Bot <bot@example.com>\n"
    )
    pr = parse_pr(f"Fix the parser for empty input (#9)\n\n{body}", 1)
    assert pr is not None
    assert problem_statement(pr) == "Fix the parser for empty input\n\n* Handle the None case too\n"


def test_tool_noise_is_stripped() -> None:
    body = (
        "The cache kept stale entries after a reload.\n\n"
        "* [pre-commit.ci] auto fixes from pre-commit.com hooks\n\n"
        "- for more information, see https://pre-commit.ci\n\n"
        "* fix mypy errors part 2\n* add changelog entry\n* docstring\n"
        "https://claude.ai/code/session_0123abcdEFGH\n"
        "Link to Devin run: https://app.devin.ai/sessions/5f6e7d\n"
        '<a href="https://cursor.com/background-agent?bcId=bc-42">Open in Cursor</a>\n'
        "Generated with Copilot\n"
        "Made with [Cursor](https://cursor.com)\n"
        "Assisted-by: SomeTool:model-x\n"
        "Signed-off-by: Dana Dev <dana@example.com>\n"
        "Change-Id: I0123456789abcdef\n"
        "Requested by: @someone\n"
        "<!-- unclosed template comment\nPlease describe ...\n"
    )
    pr = parse_pr(f"Evict stale cache entries on reload (#31)\n\n{body}", 1)
    assert pr is not None
    assert problem_statement(pr) == (
        "Evict stale cache entries on reload\n\nThe cache kept stale entries after a reload.\n"
    )


def test_template_sections_left_empty_are_dropped() -> None:
    body = (
        "## Description\n\nThe parser dropped the last line.\n\n"
        "## Checklist\n\n- [x] tests\n1. [ ] docs\n\n"
        "## Related issues\n\nFixes # (issue)\n\n"
        "### Notes\n<!-- anything else? -->\n"
    )
    assert clean_text(body) == "## Description\n\nThe parser dropped the last line."


def test_text_that_only_looks_like_noise_stays() -> None:
    body = (
        "Generated files under build/ were stale.\n"
        "* fix the race between the two writers\n"
        "Caused by: a missing lock\n"
        "See https://docs.example.org/cache for the format.\n"
    )
    assert clean_text(body) == body.strip()
    assert changed_by_cleaning("T\n\n" + body, "T\n\n" + clean_text(body)) is False
    assert changed_by_cleaning("T\n\nSigned-off-by: A <a@x>", "T\n") is True


def test_homu_bors_merge_commit() -> None:
    """homu (bors of servo and rust-lang) merges: "Auto merge of #N - owner:branch, r=x"."""
    msg = (
        "Auto merge of #277 - alice:fix-aliasing, r=bob\n\n"
        "Fix aliasing in drain\n\nThe tail was shifted twice.\n"
    )
    pr = parse_pr(msg, 2)
    assert pr is not None
    assert (pr.number, pr.title, pr.body, pr.kind, pr.branch) == (
        277,
        "Fix aliasing in drain",
        "The tail was shifted twice.",
        "merge",
        "alice:fix-aliasing",
    )
    assert parse_pr(msg, 1) is None  # a merge message on a plain commit is no merge


def test_bors_ng_merge_commit() -> None:
    """bors-ng merges: "Merge #N", the body's first line "N: title r=x a=y"."""
    msg = "Merge #88\n\n88: Handle empty input r=bob a=alice\n\nIt crashed.\n\nCo-authored-by: A <a@x>\n"
    pr = parse_pr(msg, 2)
    assert pr is not None
    assert (pr.number, pr.title, pr.kind) == (88, "Handle empty input", "merge")
    assert problem_statement(pr).strip() == "Handle empty input\n\nIt crashed."
    # A batch of several PRs in one merge is not one PR.
    assert parse_pr("Merge #1 #2\n\n1: a r=x a=y\n2: b r=x a=y\n", 2) is None
