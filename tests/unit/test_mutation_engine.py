"""The mutation engine: changed lines of a gold patch, and mutants of them per language."""

from __future__ import annotations

import ast
import hashlib
import subprocess
from pathlib import Path

import pytest

from swe_forge.ecosystems.base import git_apply, parse_patch
from swe_forge.errors import UsageError
from swe_forge.mutation import Mutant, changed_lines, generate
from swe_forge.mutation import python as python_mutator
from swe_forge.mutation.select import Candidate, choose

# ---------------------------------------------------------------------------- changed_lines


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_changed_lines_of_a_real_git_diff(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "kept.py").write_text("".join(f"line{i}\n" for i in range(1, 21)))
    (tmp_path / "gone.py").write_text("a\nb\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    lines = [f"line{i}\n" for i in range(1, 21)]
    lines[2] = "changed3\n"  # line 3 replaced
    lines.insert(15, "inserted\n")  # a new line 16
    del lines[0]  # a removal shifts everything: the new numbering counts
    (tmp_path / "kept.py").write_text("".join(lines))
    (tmp_path / "gone.py").unlink()
    (tmp_path / "new.py").write_text("x = 1\ny = 2\n")
    _git(tmp_path, "add", "-A")
    patch = _git(tmp_path, "diff", "--cached")

    got = changed_lines(patch)

    assert got == {"kept.py": {2, 15}, "new.py": {1, 2}}
    new_text = (tmp_path / "kept.py").read_text().splitlines()
    assert [new_text[n - 1] for n in sorted(got["kept.py"])] == ["changed3", "inserted"]


def test_changed_lines_of_a_removal_only_file_and_of_garbage() -> None:
    patch = "diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,2 @@\n a\n-b\n c\n"
    assert changed_lines(patch) == {"f.py": set()}
    assert changed_lines("not a diff at all") == {}


# ---------------------------------------------------------------------------- Python

WRAP = '''"""Text helpers."""

import textwrap


def wrap(text, width=70):
    """Cut overlong lines."""
    out = []
    for line in text.split("\\n"):
        if len(line) > width:  # too long: cut it
            out.append(line[:width])
        else:
            out.append(line)
    return "\\n".join(out)


def untouched(a, b):
    return a + b
'''


def _texts(mutants: list[Mutant]) -> list[str]:
    return [m.new_text for m in mutants]


def test_python_boundary_mutants_of_the_issue_case() -> None:
    mutants = generate("python", {"w.py": WRAP}, {"w.py": {10}}, seed=0, limit=50)
    lines = {m.new_text.splitlines()[9] for m in mutants}
    assert "        if len(line) > width + 1:  # too long: cut it" in lines
    assert "        if len(line) >= width:  # too long: cut it" in lines
    assert "        if not len(line) > width:  # too long: cut it" in lines or any(
        "not (len(line) > width)" in line for line in lines
    )
    ops = {m.operator for m in mutants if m.line == 10}
    assert {"boundary", "negate"} <= ops
    # Formatting elsewhere survives: only line 10 differs in a line-10 mutant.
    for m in mutants:
        if m.line == 10:
            diff = [
                i
                for i, (a, b) in enumerate(
                    zip(WRAP.splitlines(), m.new_text.splitlines(), strict=True)
                )
                if a != b
            ]
            assert diff == [9]


def test_python_mutants_stay_on_changed_lines_then_the_enclosing_function() -> None:
    few = generate("python", {"w.py": WRAP}, {"w.py": {10}}, seed=3, limit=3)
    assert len(few) == 3 and {m.line for m in few} == {10}
    many = generate("python", {"w.py": WRAP}, {"w.py": {10}}, seed=3, limit=500)
    assert len(many) > 3
    # Beyond line 10 only the lines of wrap() (6..14), never untouched() or the module.
    assert {m.line for m in many} <= set(range(6, 15))
    assert {m.line for m in many} - {10}
    # Line 10's own mutants come first.
    first_other = next(i for i, m in enumerate(many) if m.line != 10)
    assert all(m.line != 10 for m in many[first_other:])


def test_python_operators_each_produce_their_mutant() -> None:
    src = (
        "def f(a, b, items, flag):\n"
        "    if a == b and flag is None:\n"
        "        a += 2 * b\n"
        "    while a < len(items):\n"
        "        a = a - 1\n"
        "        g(a, b)\n"
        "    if items:\n"
        "        x = items[a:]\n"
        "    else:\n"
        "        x = True\n"
        "    return x\n"
    )
    mutants = generate("python", {"m.py": src}, {"m.py": set(range(1, 12))}, seed=0, limit=500)
    texts = _texts(mutants)
    expected = [
        "if a != b and flag is None:",
        "if a == b or flag is None:",
        "if a == b and flag is not None:",
        "a -= 2 * b",
        "a += 2 / b",
        "a += 3 * b",
        "while a <= len(items):",
        "while a < len(items) - 1:",
        "a = a + 1",
        "g(b, a)",
        "if not items:",
        "x = items[a + 1:]",
        "x = False",
        "return None",
    ]
    for fragment in expected:
        assert any(fragment in t for t in texts), fragment
    assert any("else" not in t for t in texts)  # dropped else
    assert any("        pass\n" in t and "g(a, b)" not in t for t in texts)  # removed statement
    for t in texts:
        ast.parse(t)  # every mutant parses
        assert t != src


def test_python_never_mutates_docstrings_comments_imports() -> None:
    src = '"""Module doc: 1 > 0."""\nimport os  # 1 > 0\nfrom x import (a,\n  b)\n__all__ = ["a", "b"]\n'
    assert generate("python", {"m.py": src}, {"m.py": {1, 2, 3, 4, 5}}, seed=0, limit=50) == []
    func = 'def f(x: "int" = 1) -> "int":\n    """Doc: 1 > 0."""\n    return x  # x > 0\n'
    mutants = generate("python", {"f.py": func}, {"f.py": {2, 3}}, seed=0, limit=50)
    # Lines 2-3: only the return; the rest of the function (line 1) is the default's value,
    # never the string annotations.
    assert [m.operator for m in mutants if m.line in (2, 3)] == ["return_default"]
    assert mutants and all(m.new_text.count('"int"') == 2 for m in mutants)


def test_python_equivalent_mutants_are_dropped() -> None:
    src = "def f(x):\n    return x + 1\n"
    found = python_mutator.mutations("m.py", src.encode(), {2})
    assert found is not None
    at = src.encode().index(b"x + 1")
    # Parenthesising changes the text, not the AST: an equivalent mutant. Two different
    # texts with one AST are one mutant.
    same = Candidate(2, 11, "constant", "parens", at, at + 1, b"(x)")
    twins = [
        Candidate(2, 15, "boundary", "a", at + 4, at + 5, b"2"),
        Candidate(2, 15, "boundary", "b", at + 4, at + 5, b"(2)"),
    ]
    found.tiers = [[[same, *twins]]]
    mutants = choose([found], seed=0, limit=10)
    assert [m.new_text for m in mutants] in (
        ["def f(x):\n    return x + 2\n"],
        ["def f(x):\n    return x + (2)\n"],
    )
    # And the engine's own list never holds two mutants with one AST, nor the original's.
    dumps = [
        ast.dump(ast.parse(m.new_text))
        for m in generate("python", {"w.py": WRAP}, {"w.py": set(range(1, 20))}, seed=0, limit=500)
    ]
    assert len(dumps) == len(set(dumps))
    assert ast.dump(ast.parse(WRAP)) not in dumps


def test_unparsable_or_foreign_files_give_no_mutants() -> None:
    assert generate("python", {"bad.py": "def f(:\n"}, {"bad.py": {1}}, seed=0, limit=5) == []
    assert (
        generate("go", {"bad.go": "package p\nfunc f( {\n"}, {"bad.go": {2}}, seed=0, limit=5) == []
    )
    # A path outside ``files``, a non-source file, a file with no lines.
    assert generate("python", {"a.py": "x = 1\n"}, {"b.py": {1}}, seed=0, limit=5) == []
    assert generate("python", {"a.txt": "x = 1\n"}, {"a.txt": {1}}, seed=0, limit=5) == []
    assert generate("python", {"a.py": "x = 1\n"}, {"a.py": set()}, seed=0, limit=5) == []
    with pytest.raises(UsageError):
        generate("cobol", {"a.cob": "x"}, {"a.cob": {1}}, seed=0, limit=5)


# ---------------------------------------------------------------------------- selection


def _two_hunks() -> tuple[dict[str, str], dict[str, set[int]]]:
    body = "\n".join(f"    v{i} = a + {i} if a > {i} else a - {i}" for i in range(30))
    one = f"def f(a):\n{body}\n    return a\n"
    two = "def g(a, b):\n    return h(a, b) > 3\n"
    files = {"pkg/one.py": one, "pkg/two.py": two}
    # Two hunks in one.py (lines 3-4 and 20), one in two.py.
    return files, {"pkg/one.py": {3, 4, 20}, "pkg/two.py": {2}}


def test_every_hunk_is_covered_before_any_gets_a_second_mutant() -> None:
    files, lines = _two_hunks()
    mutants = generate("python", files, lines, seed=7, limit=3)
    hunks = {(m.path, 3 if m.line in (3, 4) else m.line) for m in mutants}
    assert hunks == {("pkg/one.py", 3), ("pkg/one.py", 20), ("pkg/two.py", 2)}
    more = generate("python", files, lines, seed=7, limit=30)
    assert more[:3] == mutants  # the same prefix: the limit only cuts


def test_same_seed_same_list_and_the_seed_matters() -> None:
    files, lines = _two_hunks()
    runs = [generate("python", files, lines, seed=s, limit=8) for s in (1, 1, 2, 3, 4)]
    assert [m.id for m in runs[0]] == [m.id for m in runs[1]]
    assert len({tuple(m.id for m in run) for run in runs}) > 1
    assert all(len(run) == 8 for run in runs)
    assert generate("python", files, lines, seed=1, limit=0) == []


def test_mutant_id_and_record() -> None:
    (m,) = generate("python", {"w.py": WRAP}, {"w.py": {10}}, seed=0, limit=1)
    digest = hashlib.sha256(("w.py" + "\0" + m.new_text).encode()).hexdigest()[:12]
    assert m.id == digest
    record = m.to_dict()
    assert "new_text" not in record and record["diff"] == m.diff
    (fp,) = parse_patch(m.diff)
    assert (fp.old_path, fp.new_path) == ("w.py", "w.py")


# ---------------------------------------------------------------------------- tree-sitter

GO = """package p

import "fmt"

// Clamp clamps x > 0.
func Clamp(a []int, x int) (int, error) {
	if x > 0 && len(a) >= 2 {
		fmt.Println(1, x)
	} else {
		x++
	}
	y := a[x:]
	return x + len(y), nil
}
"""

RUST = """use std::cmp;

pub fn f(a: &[u8], x: usize) -> bool {
    if x >= 2 && true {
        g(1, x);
    } else {
        h();
    }
    let y = &a[x..];
    return x == 1u32;
}

pub fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}
"""

JS = """import { g } from "./g";

function f(a, x) {
  if (x === 0) { g(1, x); } else { h(); }
  if (x < a.length && !a[x]) { x = 2; }
  return a.slice(x) + "2";
}
"""

TS = """export function f(a: string, x: number): string {
  if (x < 3) { return a; }
  return a.slice(x);
}
"""

JAVA = """package p;

class A {
  int f(int x) {
    if (x != 0) { g(1, x); } else { h(); }
    return x * 2L;
  }
  String s(String t, int i) {
    return t.isEmpty() ? t : t.substring(i);
  }
}
"""

CASES = {
    "go": (
        "p/clamp.go",
        GO,
        [
            "if x >= 0 && len(a) >= 2 {",
            "if x > 0 || len(a) >= 2 {",
            "if !(x > 0 && len(a) >= 2) {",
            "fmt.Println(x, 1)",
            "y := a[x + 1:]",
            "return 0, nil",
            "return x - len(y), nil",
            "len(a) >= 3",
        ],
    ),
    "rust": (
        "src/lib.rs",
        RUST,
        [
            "if x >= 2 || true {",
            "if x >= 2 && false {",
            "if !(x >= 2 && true) {",
            "g(x, 1);",
            "let y = &a[x + 1..];",
            "return false;",
            "return x != 1u32;",
            "return x == 2u32;",
            "-> Vec<&str> {\n    Vec::new()\n}",
        ],
    ),
    "js": (
        "lib/f.js",
        JS,
        [
            "if (x !== 0)",
            "if (!(x < a.length && !a[x]))",
            "if (x < a.length && a[x])",
            "g(x, 1)",
            "return undefined;",
            "a.slice(x + 1)",
            "if (x === 0) { g(1, x); }\n",
        ],
    ),
    "java": (
        "src/main/java/p/A.java",
        JAVA,
        [
            "if (x == 0)",
            "return x / 2L;",
            "return x * 3L;",
            "return 0;",
            "return null;",
            "t.substring(i + 1)",
            "return !(t.isEmpty()) ? t",
            "if (x != 0) { g(1, x); }\n",
        ],
    ),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_tree_sitter_operators(language: str) -> None:
    path, src, expected = CASES[language]
    lines = set(range(1, src.count("\n") + 1))
    mutants = generate(language, {path: src}, {path: lines}, seed=0, limit=500)
    texts = _texts(mutants)
    for fragment in expected:
        assert any(fragment in t for t in texts), fragment
    assert any(m.operator == "remove_statement" for m in mutants)
    # An equality's negation is its operator flip: not proposed twice.
    assert not any("!(x === 0)" in t or "!(x != 0)" in t for t in texts)
    for m in mutants:
        assert m.new_text != src and m.path == path
    # Comments, imports and strings are never touched.
    for t in texts:
        assert all(
            keep in t
            for keep in (
                'import "fmt"',
                "// Clamp clamps x > 0.",
                "use std::cmp;",
                'from "./g"',
                "package p;",
            )
            if keep in src
        )
        # A string literal is not a number, and `+` on it is concatenation.
        assert '"3"' not in t and '"1"' not in t and '- "2"' not in t


def test_typescript_gets_no_untyped_default_return() -> None:
    mutants = generate("js", {"src/f.ts": TS}, {"src/f.ts": {1, 2, 3, 4}}, seed=0, limit=100)
    texts = _texts(mutants)
    assert any("if (x <= 3)" in t for t in texts)
    assert any("a.slice(x + 1)" in t for t in texts)
    assert not any("undefined" in t for t in texts)


def test_tree_sitter_mutants_stay_on_changed_lines() -> None:
    path, src, _ = CASES["go"]
    mutants = generate("go", {path: src}, {path: {7}}, seed=0, limit=4)
    assert len(mutants) == 4 and {m.line for m in mutants} == {7}
    wider = generate("go", {path: src}, {path: {7}}, seed=0, limit=500)
    assert {m.line for m in wider} <= set(range(6, 15)) and len({m.line for m in wider}) > 1


# ---------------------------------------------------------------------------- git apply


def test_every_diff_applies_with_git_apply(tmp_path: Path) -> None:
    sources = {
        "python": ("pkg/w.py", WRAP.rstrip("\n")),  # no final newline
        **{lang: (path, src) for lang, (path, src, _) in CASES.items()},
    }
    for language, (path, src) in sources.items():
        lines = set(range(1, src.count("\n") + 2))
        mutants = generate(language, {path: src}, {path: lines}, seed=5, limit=12)
        assert mutants, language
        for m in mutants:
            tree = tmp_path / f"{language}-{m.id}"
            (tree / path).parent.mkdir(parents=True)
            (tree / path).write_bytes(src.encode())
            git_apply(tree, [m.diff])
            assert (tree / path).read_bytes().decode() == m.new_text, (language, m.description)


# ---------------------------------------------------------------------------- bounded work


def test_a_huge_file_costs_only_its_changed_region(monkeypatch: pytest.MonkeyPatch) -> None:
    funcs = [
        f"def f{i}(a):\n    if a > {i}:\n        return a - {i}\n    return a\n"
        for i in range(3000)
    ]
    src = "".join(funcs)
    target = 4 * 1500 + 2  # the `if` of f1500
    visited: list[int] = []
    propose = python_mutator._Finder.propose

    def counting(self: python_mutator._Finder, node: ast.AST) -> object:
        visited.append(getattr(node, "lineno", 0))
        return propose(self, node)

    monkeypatch.setattr(python_mutator._Finder, "propose", counting)
    mutants = generate("python", {"big.py": src}, {"big.py": {target}}, seed=0, limit=100)
    assert mutants and {m.line for m in mutants} <= set(range(target - 1, target + 3))
    assert any(m.line == target for m in mutants)
    # Only the module node, f1500's own nodes (twice: its lines, then its function) are seen.
    assert 0 < len(visited) < 100
    assert {n for n in visited if n} <= set(range(target - 1, target + 3))


def test_tree_sitter_huge_file_mutants_stay_in_the_changed_function() -> None:
    funcs = [
        f"func F{i}(a int) int {{\n\tif a > {i} {{\n\t\treturn a - {i}\n\t}}\n\treturn a\n}}\n"
        for i in range(3000)
    ]
    src = "package p\n\n" + "".join(funcs)
    target = 2 + 6 * 2000 + 2  # the `if` of F2000
    mutants = generate("go", {"big.go": src}, {"big.go": {target}}, seed=0, limit=100)
    assert any(m.line == target for m in mutants)
    assert {m.line for m in mutants} <= set(range(target - 1, target + 5))


def test_changed_lines_group_as_git_hunks() -> None:
    from swe_forge.mutation.select import hunks

    # Six unchanged lines between two changes: git shows one hunk; seven: two.
    assert hunks({1, 2, 9, 17, 30}) == [(1, 9), (17, 17), (30, 30)]
    assert hunks([]) == []


def test_python_messages_keep_their_text() -> None:
    src = (
        "def f(x, log):\n"
        '    log.info("seen %s", x)\n'
        "    if x < 0:\n"
        '        raise ValueError("negative: " + str(x))\n'
        '    return "ok"\n'
    )
    mutants = generate("python", {"m.py": src}, {"m.py": {2, 3, 4, 5}}, seed=0, limit=100)
    constants = [m for m in mutants if m.operator == "constant"]
    # Only the returned value's string is a mutant; the log and error messages are not.
    assert [m.line for m in constants] == [5]
    assert any(m.operator == "remove_statement" and m.line == 4 for m in mutants)


def test_text_that_cannot_be_a_file_gives_no_mutants() -> None:
    # A lone surrogate (no decoder of a real file makes one) must not raise.
    assert generate("python", {"a.py": "x = 1  # \ud800\n"}, {"a.py": {1}}, seed=0, limit=5) == []
