"""The optional GitHub source, against a local server that answers in the REST API's shapes."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from swe_forge.commands.mine import run_mine
from swe_forge.config import GitHubConfig, load_config
from swe_forge.errors import RemoteError
from swe_forge.mining.github import GitHubClient
from swe_forge.mining.miner import MineOptions
from tests.conftest import RepoBuilder

FIX = {
    "pkg/core.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": "def test_add():\n    pass\n",
}


class FakeGitHub:
    """Just enough of api.github.com: pulls, issues, paginated comments, errors, rate limits."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str | None]] = []
        self.fail_first: dict[str, int] = {}  # path -> status to answer once
        base = "/repos/acme/app"
        self.routes: dict[str, Any] = {
            f"{base}/pulls/1": {
                "url": "https://api.github.com/repos/acme/app/pulls/1",
                "number": 1,
                "state": "closed",
                "title": "Fix add",
                "body": "This PR fixes #10 and closes other/repo#11.\r\n\r\n<!-- template -->",
                "created_at": "2024-03-01T14:00:00Z",
                "merged_at": "2024-03-01T15:00:00Z",
                "user": {"login": "alice"},
            },
            f"{base}/issues/10": {
                "number": 10,
                "title": "add() subtracts",
                "body": "Calling `add(1, 2)` returns -1.\r\n\r\nExpected 3.",
                "state": "closed",
                "created_at": "2024-02-01T09:00:00Z",
                "user": {"login": "bob"},
                "labels": [{"name": "bug"}],
            },
            f"{base}/pulls/2": {
                "number": 2,
                "title": "Speed up add",
                "body": "Refs #3 (a PR, not an issue)",
                "created_at": "2024-03-01T16:00:00Z",
                "state": "closed",
            },
            f"{base}/issues/3": {
                "number": 3,
                "title": "a PR",
                "body": "",
                "pull_request": {"url": "x"},
            },
        }
        self.comments = [
            {
                "id": i,
                "body": f"comment {i}",
                "created_at": f"2024-02-{i + 1:02d}T10:00:00Z",
                "user": {"login": "c"},
            }
            for i in range(1, 4)
        ] + [
            {
                "id": 9,
                "body": "after the PR",
                "created_at": "2024-03-02T10:00:00Z",
                "user": {"login": "c"},
            }
        ]

    def handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                fake.requests.append((url.path, self.headers.get("Authorization")))
                if self.headers.get("Accept") != "application/vnd.github+json":
                    self._send(415, {"message": "Unsupported Media Type"})
                    return
                status = fake.fail_first.pop(url.path, None)
                if status == 403:
                    self._send(
                        403,
                        {"message": "API rate limit exceeded"},
                        {"X-RateLimit-Remaining": "0", "Retry-After": "0"},
                    )
                    return
                if status is not None:
                    self._send(status, {"message": "Server Error"})
                    return
                if url.path == "/repos/acme/app/issues/10/comments":
                    page = int(parse_qs(url.query).get("page", ["1"])[0])
                    per = 2
                    items = fake.comments[(page - 1) * per : page * per]
                    headers = {}
                    if page * per < len(fake.comments):
                        nxt = (
                            f"http://{self.headers['Host']}{url.path}?per_page=100&page={page + 1}"
                        )
                        headers["Link"] = f'<{nxt}>; rel="next", <{nxt}>; rel="last"'
                    self._send(200, items, headers)
                    return
                if url.path in fake.routes:
                    self._send(200, fake.routes[url.path])
                    return
                self._send(
                    404,
                    {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"},
                )

        return Handler


@pytest.fixture
def github() -> Iterator[tuple[FakeGitHub, str]]:
    fake = FakeGitHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_statement_from_linked_issue(
    make_repo: Callable[..., RepoBuilder],
    tmp_path: Path,
    github: tuple[FakeGitHub, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake, url = github
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    repo = make_repo()
    repo.writer.add_remote("origin", "https://github.com/acme/app.git")
    repo.pr(1, FIX, "Fix add", "fixes #10")
    repo.pr(
        2,
        {
            "pkg/core.py": "def add(a, b):\n    return b + a\n",
            "tests/test_core.py": "def test_add2():\n    pass\n",
        },
        "Speed up add",
        squash=True,
    )
    repo.pr(
        4,
        {
            "pkg/core.py": "def add(a, b):\n    return sum((a, b))\n",
            "tests/test_core.py": "def test_add3():\n    pass\n",
        },
        "Unknown to the API",
    )
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"github:\n  api_url: {url}\n  max_retries: 2\n")
    fake.fail_first = {"/repos/acme/app/pulls/1": 500, "/repos/acme/app/issues/10": 403}
    out = tmp_path / "c.jsonl"
    run_mine([str(repo.path)], out, config=load_config(cfg), options=MineOptions(), github=True)
    cands = {
        json.loads(x)["provenance"]["pr_number"]: json.loads(x)
        for x in out.read_text().splitlines()
    }
    one = cands[1]
    assert (
        one["problem_statement"]
        == "add() subtracts\nCalling `add(1, 2)` returns -1.\n\nExpected 3.\n"
    )
    assert (
        one["hints_text"] == "comment 1\n\ncomment 2\n\ncomment 3"
    )  # not the comment after the PR
    assert one["provenance"]["problem_statement_source"] == "github_issue"
    assert one["provenance"]["linked_issues"] == [10]
    # PR 2 links only a PR: the PR's own text is the statement.
    assert cands[2]["provenance"]["problem_statement_source"] == "github_pr"
    assert cands[2]["problem_statement"].startswith("Speed up add\n\nRefs #3")
    # PR 4 is unknown to the API (404): the commit message is used.
    assert cands[4]["provenance"]["problem_statement_source"] == "commit_message"
    paths = [p for p, _ in fake.requests]
    assert paths.count("/repos/acme/app/pulls/1") == 2  # retried after the 500
    assert paths.count("/repos/acme/app/issues/10/comments") == 2  # two pages
    assert all(auth == "Bearer t0ken" for _, auth in fake.requests)
    assert "/repos/other/repo/issues/11" not in paths  # cross-repository links are not followed


def test_bad_token_is_a_remote_error(github: tuple[FakeGitHub, str]) -> None:
    fake, url = github

    fake.fail_first = {"/repos/acme/app/pulls/1": 401}
    client = GitHubClient(GitHubConfig(api_url=url, max_retries=0), token="bad")
    with pytest.raises(RemoteError) as err:
        client.statement_for("acme/app", 1, "")
    assert "401" in err.value.message and "GITHUB_TOKEN" in err.value.hint


def test_unreachable_api_is_a_remote_error() -> None:
    client = GitHubClient(
        GitHubConfig(api_url="http://127.0.0.1:9", timeout_seconds=2, max_retries=0), token=""
    )
    with pytest.raises(RemoteError) as err:
        client.get("/repos/acme/app/pulls/1")
    assert err.value.exit_code == 10
