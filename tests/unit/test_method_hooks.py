"""Comparison methods a Go, Java or Rust patch adds or changes (swe_forge/ecosystems/method_hooks.py):
the expected value is handed to them, so they could check it instead of the code computing it."""

from __future__ import annotations

import difflib

import pytest

from swe_forge.ecosystems import method_hooks as mh


def _diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        "/dev/null" if not before else f"a/{path}",
        f"b/{path}",
    )
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def _added(lang: str, path: str, before: str, after: str) -> list[tuple[str, str]]:
    files = {path: before.encode()} if before else {}
    found = mh.added(_diff(path, before, after), files.get, lang)
    return [(h.owner, h.method) for h in found]


JAVA = """package a;

public final class Words {
    private final String s;

    Words(String s) {
        this.s = s;
    }

    public int size() {
        return s.length();
    }
}
"""

GO = """package a

type Version struct{ major, minor int }

func (v Version) String() string { return "" }
"""

RUST = """pub struct Fit(pub String);

impl Fit {
    pub fn len(&self) -> usize { self.0.len() }
}
"""


@pytest.mark.parametrize(
    ("lang", "path", "base", "extra", "expected"),
    [
        (
            "java",
            "src/main/java/a/Words.java",
            JAVA,
            "    @Override public boolean equals(Object o) { return o != null; }\n",
            ("Words", "equals"),
        ),
        (
            "java",
            "src/main/java/a/Words.java",
            JAVA,
            "    public boolean contains(Object o) { return true; }\n",
            ("Words", "contains"),
        ),
        (
            "java",
            "src/main/java/a/Words.java",
            JAVA,
            "    Object c = new java.util.AbstractList<String>() {\n"
            '        public String get(int i) { return ""; }\n'
            "        public int size() { return 0; }\n"
            "        public boolean equals(Object o) { return true; }\n    };\n",
            ("new java.util.AbstractList<String>", "equals"),
        ),
        (
            "java",
            "src/main/java/a/Words.java",
            JAVA,
            "    public int compareTo(Words o) { return 0; }\n",
            ("Words", "compareTo"),
        ),
    ],
)
def test_a_new_comparison_method_is_a_hook(
    lang: str, path: str, base: str, extra: str, expected: tuple[str, str]
) -> None:
    after = base.rstrip()[:-1] + extra + "}\n"
    assert expected in _added(lang, path, base, after)


def test_go_and_rust_comparisons() -> None:
    go = GO + "\nfunc (v *Version) Equal(o Version) bool { return true }\n"
    assert _added("go", "v.go", GO, go) == [("Version", "Equal")]
    rust = (
        RUST + "\nimpl PartialEq<&str> for Fit {\n    fn eq(&self, o: &&str) -> bool { true }\n}\n"
    )
    assert _added("rust", "src/fit.rs", RUST, rust) == [("Fit", "PartialEq<&str>")]


def test_a_changed_comparison_is_a_hook_and_an_unchanged_one_is_not() -> None:
    base = JAVA.rstrip()[:-1] + "    public boolean equals(Object o) { return o == this; }\n}\n"
    changed = base.replace("return o == this;", "return o != null;")
    assert _added("java", "A.java", base, changed) == [("Words", "equals")]
    elsewhere = base.replace("return s.length();", "return s.length() + 0;")
    assert _added("java", "A.java", base, elsewhere) == []


def test_other_methods_and_overloads_with_other_arity_are_not_hooks() -> None:
    extra = (
        "    public boolean contains(String a, String b) { return true; }\n"
        "    public String toString() { return s; }\n    public int hashCode() { return 1; }\n"
    )
    assert _added("java", "A.java", JAVA, JAVA.rstrip()[:-1] + extra + "}\n") == []
    derive = "#[derive(PartialEq, Eq, Debug)]\npub struct S(String);\n"
    assert _added("rust", "src/s.rs", RUST, RUST + derive) == []
    go = GO + "\nfunc Equal(a, b Version) bool { return a == b }\n"  # no receiver: a function
    assert _added("go", "v.go", GO, go) == []


def test_the_reference_fix_allows_the_same_method_of_a_type_of_the_same_name() -> None:
    base = JAVA
    cand = JAVA.rstrip()[:-1] + "    public boolean equals(Object o) { return true; }\n}\n"
    gold = JAVA.rstrip()[:-1] + "    public boolean equals(Object o) { return o == this; }\n}\n"
    files = {"A.java": base.encode()}
    found = mh.violations(
        mh.added(_diff("A.java", base, cand), files.get, "java"),
        mh.added(_diff("A.java", base, gold), files.get, "java"),
    )
    assert found == []
    found = mh.violations(mh.added(_diff("A.java", base, cand), files.get, "java"), [])
    assert [v["code"] for v in found] == ["capability_comparison_methods"]
    assert "Words.equals" in found[0]["detail"]


def test_unicode_escapes_are_read_as_javac_reads_them() -> None:
    extra = "    public boolean \\u0065quals(Object o) { return true; }\n"
    assert _added("java", "A.java", JAVA, JAVA.rstrip()[:-1] + extra + "}\n") == [
        ("Words", "equals")
    ]


def test_the_ecosystems_this_gate_reads() -> None:
    # The adapters ask by their own name (HostCanaries.check_candidate): JavaScript's
    # comparisons are the runtime's (Object.is), not the project's methods.
    from swe_forge.ecosystems import ecosystem_named

    assert sorted(mh.LANGUAGES) == ["go", "java", "rust"]
    assert {ecosystem_named(n).name for n in ("go", "java", "rust")} == mh.LANGUAGES
    assert "js" not in mh.LANGUAGES and "python" not in mh.LANGUAGES
