"""Rust's canary writer: sites of ``#[test]`` functions (assert macros with format arguments,
``vec!``, modules inline and in files, ``should_panic``), their roles and perturbations,
copies (and, with cargo, that a perturbed copy fails where the unperturbed one passes)."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from swe_forge.ecosystems import syntax, writer_for
from swe_forge.ecosystems.canaries import Site, punctuation_only
from swe_forge.errors import UsageError

W = writer_for("rust")
PATH = "tests/api/main.rs"
SOURCE = rb"""use mycrate::{parse, Token, Value};

mod util;

#[test]
fn parse_empty() {
    assert_eq!(parse(""), Vec::<Token>::new());
    assert_eq!(parse("1"), vec![Token::Int(1)], "parse {:?}", "1");
    let expected = vec!["a", "b"];
    assert_eq!(split("a,b"), expected);
    assert_eq!(Some(3u8), count(b"abc"));
    assert!(value("x") == Value::Str("x".to_string()), "value of {}", "x");
    assert!(name().starts_with("na"));
    assert!(!name().contains("zz"));
    assert_ne!(parse("2"), vec![Token::Int(3)]);
    let r = run(r#"{"a": 1}"#).expect("runs");
    assert_eq!(r.ratio, 2.5f64);
    assert_eq!(r.flag, true);
    assert_eq!(r.ch, 'x');
    assert_eq!(r.bytes, b"ab\n");
    println!("done {}", 42);
    let buf = [0u8; 16];
    assert_eq!(len(&buf), 0x10);
}

/// Bad input panics.
#[test]
#[should_panic(expected = "bad input")]
fn parse_panics() {
    parse_strict("!!");
}

#[tokio::test]
async fn parse_async() {
    assert_eq!(parse_later("7").await, 7i64, "later");
}

mod edge {
    use super::*;

    #[test]
    fn nested() {
        assert_eq!(Point { x: 1, y: -2 }, make(1, -2));
        assert_eq!(words("a b").len(), 2usize);
    }

    fn helper() {
        assert_eq!(1, 1);
    }
}

fn not_a_test() {
    assert_eq!(parse("9"), vec![]);
}
"""
UTIL = b"""#[test]
fn in_util() {
    assert_eq!(super::double(2), 4);
}
"""


def sites_of(test: str, path: str = PATH, source: bytes = SOURCE) -> list[tuple[str, str, str]]:
    return [(s.text, s.kind, s.role) for s in W.sites(path, source, [test])]


def test_test_files_follow_the_module_path() -> None:
    files = [
        "tests/api/main.rs",
        "tests/api/util.rs",
        "tests/api/util/mod.rs",
        "tests/api/deep/more.rs",
        "tests/other.rs",
        "tests/common/mod.rs",
    ]
    assert W.test_files("tests/api/main.rs::util::in_util", files) == [
        "tests/api/main.rs",
        "tests/api/util.rs",
        "tests/api/util/mod.rs",
    ]
    assert W.test_files("tests/api/main.rs::parse_empty", files) == ["tests/api/main.rs"]
    assert W.test_files("tests/api/main.rs::deep::more::x", files) == [
        "tests/api/main.rs",
        "tests/api/deep/more.rs",
    ]
    # A target at the top of tests/ declares its modules beside it.
    assert W.test_files("tests/other.rs::common::helper_test", files) == [
        "tests/other.rs",
        "tests/common/mod.rs",
    ]


def test_assert_eq_with_format_arguments_vec_and_bindings() -> None:
    got = sites_of("tests/api/main.rs::parse_empty")
    assert got == [
        ('""', "string", "other"),
        ('"1"', "string", "other"),
        ("1", "int", "expected"),  # vec![Token::Int(1)]; its "parse {:?}", "1" are no sites
        ('"a"', "string", "expected"),  # let expected = vec!["a", "b"]
        ('"b"', "string", "expected"),
        ('"a,b"', "string", "other"),
        ("3u8", "int", "expected"),
        ('b"abc"', "bytes", "other"),
        ('"x"', "string", "other"),
        ('"x"', "string", "expected"),  # Value::Str("x".to_string())
        ('"na"', "string", "expected"),  # starts_with in assert!
        ('"zz"', "string", "other"),  # under !: no expectation
        ('"2"', "string", "other"),  # assert_ne!
        ("3", "int", "other"),
        ('r#"{"a": 1}"#', "string", "other"),  # .expect("runs") is no site
        ("2.5f64", "float", "expected"),
        ("true", "bool", "expected"),
        ("'x'", "char", "expected"),
        ('b"ab\\n"', "bytes", "expected"),
        ("0u8", "int", "other"),  # println! and the array length are no sites
        ("0x10", "int", "expected"),
    ]


def test_should_panic_tokio_and_modules() -> None:
    assert sites_of("tests/api/main.rs::parse_panics") == [
        ('"bad input"', "string", "expected"),
        ('"!!"', "string", "other"),
    ]
    assert sites_of("tests/api/main.rs::parse_async") == [
        ('"7"', "string", "other"),
        ("7i64", "int", "expected"),
    ]
    assert sites_of("tests/api/main.rs::edge::nested") == [
        ("1", "int", "expected"),
        ("2", "int", "expected"),
        ("1", "int", "other"),
        ("2", "int", "other"),
        ('"a b"', "string", "other"),
        ("2usize", "int", "expected"),
    ]
    assert sites_of("tests/api/main.rs::util::in_util", "tests/api/util.rs", UTIL) == [
        ("2", "int", "other"),
        ("4", "int", "expected"),
    ]


def test_a_mutable_binding_is_no_value() -> None:
    source = b"#[test]\nfn t() {\n    let mut n = 0;\n    n += step();\n    let want = 5;\n    assert_eq!(n, 3);\n    assert_eq!(count(), want);\n}\n"
    got = [(s.text, s.role) for s in W.sites("tests/t.rs", source, ["tests/t.rs::t"])]
    assert got == [("0", "other"), ("5", "expected"), ("3", "expected")]


def test_what_is_no_test_has_no_sites() -> None:
    missing = [
        "tests/api/main.rs::edge::helper",
        "tests/api/main.rs::not_a_test",
        "tests/api/main.rs::missing",
        "tests/api/main.rs::nested",
        "tests/other.rs::parse_empty",
    ]
    assert W.sites(PATH, SOURCE, missing) == []
    assert W.sites("tests/api/util.rs", UTIL, ["tests/api/main.rs::in_util"]) == []


EVERY = [
    "tests/api/main.rs::parse_empty",
    "tests/api/main.rs::parse_panics",
    "tests/api/main.rs::parse_async",
    "tests/api/main.rs::edge::nested",
]


def check_perturbation(source: bytes, site: Site, out: bytes) -> str:
    """The new literal; asserts the rest of the file is unchanged and it parses."""
    tail = len(source) - site.end
    assert (
        out[: site.start] == source[: site.start] and out[len(out) - tail :] == source[site.end :]
    )
    new = out[site.start : len(out) - tail].decode()
    assert new != site.text
    assert not syntax.parse("rust", out).root_node.has_error
    return new


@pytest.mark.parametrize("seed", range(6))
def test_every_perturbation_parses_differs_and_keeps_the_form(seed: int) -> None:
    for site in W.sites(PATH, SOURCE, EVERY):
        out = W.perturb(SOURCE, site, random.Random(seed))
        if punctuation_only(site.text):
            assert out is None, site  # no change of "-" reads naturally
            continue
        assert out is not None, site
        assert out == W.perturb(SOURCE, site, random.Random(seed))
        new = check_perturbation(SOURCE, site, out)
        if site.kind in ("string", "bytes"):
            prefix = re.match(r'[a-z]*#*"', site.text)
            assert prefix is not None and new.startswith(prefix.group(0))
            assert new[-1] == site.text[-1]
            assert len(new) == len(site.text) or site.text == '""'
        elif site.kind in ("int", "float"):
            suffix = re.search(r"(u8|i64|usize|f64)$", site.text)
            if suffix:
                assert new.endswith(suffix.group(0))
            assert new.startswith("0x") == site.text.startswith("0x")
        elif site.kind == "bool":
            assert {new, site.text} == {"true", "false"}
        elif site.kind == "char":
            assert re.fullmatch(r"'.'", new)


def test_typed_integers_stay_in_their_type() -> None:
    source = b"#[test]\nfn t() {\n    assert_eq!(f(), 255u8);\n    assert_eq!(g(), 0usize);\n}\n"
    sites = W.sites("tests/t.rs", source, ["tests/t.rs::t"])
    for seed in range(30):
        byte = check_perturbation(
            source, sites[0], W.perturb(source, sites[0], random.Random(seed)) or b""
        )
        assert byte.endswith("u8") and int(byte[:-2]) < 255
        size = check_perturbation(
            source, sites[1], W.perturb(source, sites[1], random.Random(seed)) or b""
        )
        assert size.endswith("usize") and int(size[:-5]) > 0


def test_a_stale_site_is_not_perturbed() -> None:
    site = W.sites(PATH, SOURCE, ["tests/api/main.rs::parse_panics"])[0]
    assert W.perturb(SOURCE.replace(b"bad input", b"bad inputs"), site, random.Random(0)) is None


# ------------------------------------------------------------------------------------ copies


def test_copies_keep_attributes_and_their_module() -> None:
    panics = W.sites(PATH, SOURCE, ["tests/api/main.rs::parse_panics"])[0]
    nested = W.sites(PATH, SOURCE, ["tests/api/main.rs::edge::nested"])[0]
    out = W.copies(
        PATH,
        SOURCE,
        [
            ("tests/api/main.rs::parse_panics", panics, "panics_copy"),
            ("tests/api/main.rs::edge::nested", nested, "nested_copy"),
            ("tests/api/main.rs::edge::nested", None, "nested_plain"),
        ],
    ).decode()
    assert not syntax.parse("rust", out.encode()).root_node.has_error
    copy = out[out.index("fn panics_copy") - 60 : out.index("fn panics_copy")]
    assert "#[test]\n#[should_panic(expected = " in copy and '"bad input"' not in copy
    assert out.count('"bad input"') == 1
    edge = out[out.index("mod edge") :]
    assert "    #[test]\n    fn nested_copy() {" in edge
    assert edge.index("fn nested_copy") < edge.index("fn nested_plain") < edge.index("fn helper")
    assert W.copy_id("tests/api/main.rs::edge::nested", "nested_copy") == (
        "tests/api/main.rs::edge::nested_copy"
    )


def test_copies_refuse_what_is_not_there() -> None:
    with pytest.raises(UsageError):
        W.copies(PATH, SOURCE, [("tests/api/main.rs::not_a_test", None, "x")])


def test_new_names() -> None:
    taken = {"parse_empty"}
    rng = random.Random(5)
    for _ in range(20):
        name = W.new_name("tests/api/main.rs::parse_empty", rng, taken)
        assert re.fullmatch(r"[a-z]+(_[a-z]+){1,3}", name) and name not in taken
        taken.add(name)


# ------------------------------------------------------------------------------ with cargo


def _cargo_test(tree: Path, target: str) -> dict[str, str]:
    env = {**os.environ, "CARGO_TARGET_DIR": str(tree.parent / "target"), "CARGO_NET_OFFLINE": "1"}
    proc = subprocess.run(
        ["cargo", "test", "--offline", "--test", target, "--", "--test-threads=1"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    found = re.findall(r"^test (\S+) \.\.\. (ok|FAILED)$", proc.stdout, re.M)
    assert found, proc.stdout + proc.stderr
    return {name: "pass" if got == "ok" else "fail" for name, got in found}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo")
def test_cargo_copies_and_twins_of_the_example(tmp_path: Path) -> None:
    from swe_forge.example.catalog import create_language_example

    tree = tmp_path / "rustkit"
    create_language_example("rust", tree)
    path = "tests/words/main.rs"
    source = (tree / path).read_bytes()
    test = "tests/words/main.rs::words_any_white_space"
    sites = W.sites(path, source, [test])
    expected = [s for s in sites if s.role == "expected"]
    assert [s.text for s in expected] == ['"rust"', '"is"', '"fun"']
    specs = [(test, None, "plain_copy")] + [(test, s, f"site_copy_{s.index}") for s in sites]
    (tree / path).write_bytes(W.copies(path, source, specs))
    got = _cargo_test(tree, "words")
    assert got["plain_copy"] == got["words_any_white_space"] == got["edge::empty"] == "pass"
    for s in expected:
        assert got[W.copy_id(test, f"site_copy_{s.index}").split("::", 1)[1]] == "fail"
    (tree / path).write_bytes(W.perturb(source, expected[1], random.Random(3)) or b"")
    got = _cargo_test(tree, "words")
    assert got == {"words_any_white_space": "fail", "edge::empty": "pass"}


def test_format_strings_are_no_sites() -> None:
    # A format macro's template is checked by the compiler ({:?} changed to {#?} does not
    # build) and is no value a test compares, top-level or inside an assertion's tokens.
    source = b"""#[test]
fn t() {
    assert_eq!("x{}", format!("{:?}", e()));
    let s = format!("{} {}", "abc", 1);
    let mut o = String::new();
    write!(o, "{}-", "q").unwrap();
    assert_eq!(s, "abc 1");
}
"""
    got = sites_of("tests/a.rs::t", "tests/a.rs", source)
    assert [t for t, _, _ in got] == ['"x{}"', '"abc"', "1", '"q"', '"abc 1"']


def test_any_macros_template_is_no_site_and_punctuation_alone_is_never_changed() -> None:
    source = b"""#[test]
fn t() {
    let error = anyhow!("{} {}!", "oh", "no");
    let plain = anyhow!("oh no!");
    let y: u32 = x.parse().context("...")?;
    assert_eq!(y.to_string(), "...");
}
"""
    got = sites_of("tests/a.rs::t", "tests/a.rs", source)
    assert [t for t, _, _ in got] == ['"oh"', '"no"', '"oh no!"', '"..."', '"..."']
    sites = W.sites("tests/a.rs", source, ["tests/a.rs::t"])
    for site in sites:
        out = W.perturb(source, site, random.Random(3))
        assert (out is None) == (site.text == '"..."'), site.text


def test_a_tuple_fields_index_is_no_site() -> None:
    # `pair.1`, `.unwrap().0`, in a macro's tokens too: no value, and another index names a
    # field that is not there (the decoy would not build).
    source = (
        b"#[test]\nfn t() {\n    assert_eq!(7, e.downcast_ref::<E>().unwrap().0);\n"
        b"    let n = pair.1;\n    assert_eq!(3.5, n + 1.0);\n}\n"
    )
    got = [(s.text, s.kind) for s in W.sites("tests/t.rs", source, ["tests/t.rs::t"])]
    assert got == [("7", "int"), ("3.5", "float"), ("1.0", "float")], got


ASSERTS_ONLY = b"""#[test]
fn parses_bad() {
    let r = parse(b"GET");
    assert!(r.is_err(), "expected an error for {:?}", r);
    assert!(!ok());
}

#[test]
fn literal() {
    assert_eq!(f(), 3);
    assert!(g());
}
"""


def test_assert_conditions_are_guard_sites_where_no_literal_is_expected() -> None:
    # A test whose only checks are `assert!(cond)` had no expected literal, hence no decoy
    # (no_decoys). The conditions, negated inside the macro call, are decoys the gold patch
    # fails wherever the assertion runs; the message arguments stay as they are.
    w = writer_for("rust")
    path = "tests/r.rs"

    def sites(test: str) -> list[tuple[str, str, str]]:
        return [(s.text, s.kind, s.role) for s in w.sites(path, ASSERTS_ONLY, [test])]

    assert sites("tests/r.rs::parses_bad") == [
        ('b"GET"', "bytes", "other"),
        ("r.is_err()", "guard", "expected"),
        ("!ok()", "guard", "expected"),
    ]
    assert sites("tests/r.rs::literal") == [("3", "int", "expected")]
    guard = w.sites(path, ASSERTS_ONLY, ["tests/r.rs::parses_bad"])[1]
    copied = w.copies(path, ASSERTS_ONLY, [(guard.test, guard, "parses_zzz")])
    copy = copied[copied.index(b"fn parses_zzz") :]
    assert b'assert!(!r.is_err(), "expected an error for {:?}", r);' in copy
    assert copied.count(b"assert!(r.is_err(),") == 1


EQ_ONLY = b"""#[test]
fn none_for_big() {
    let big_f = 1.0e123;
    assert_eq!(None, cast::<f64, NonZeroI8>(big_f));
    debug_assert_ne!(cast::<f64, u8>(big_f), Some(small()));
}

#[test]
fn written() {
    assert_eq!(cast::<f64, u8>(2.0).unwrap(), 2);
}
"""


def test_equality_assertions_are_guard_sites_where_no_value_is_written() -> None:
    # num-traits-334 (first contact, session 21): `assert_eq!(None, cast(big))` compares with
    # no literal a decoy can change (1.0e123 is an input), so it was no_decoys. The assertion
    # itself is a guard then: its decoy is the opposite macro, which the gold patch fails.
    w = writer_for("rust")
    path = "tests/cast.rs"

    def sites(test: str) -> list[tuple[str, str, str]]:
        return [(s.text, s.kind, s.role) for s in w.sites(path, EQ_ONLY, [test])]

    assert sites("tests/cast.rs::none_for_big") == [
        ("1.0e123", "float", "other"),
        ("assert_eq", "guard", "expected"),
        ("debug_assert_ne", "guard", "expected"),
    ]
    # A value written out is the expectation: no guard beside it (and the comma inside the
    # turbofish `::<f64, u8>` is not the one between the macro's arguments: before, the 2
    # was read as a message argument and was no site).
    assert sites("tests/cast.rs::written") == [("2.0", "float", "other"), ("2", "int", "expected")]
    eq, ne = w.sites(path, EQ_ONLY, ["tests/cast.rs::none_for_big"])[1:]
    rng = random.Random(1)
    assert w.perturb(EQ_ONLY, eq, rng) == EQ_ONLY.replace(b"assert_eq!(None", b"assert_ne!(None")
    flipped = w.perturb(EQ_ONLY, ne, rng)
    assert flipped is not None and b"debug_assert_eq!(cast::<f64, u8>(big_f)" in flipped
    copied = w.copies(path, EQ_ONLY, [(eq.test, eq, "none_for_zzz")])
    copy = copied[copied.index(b"fn none_for_zzz") :]
    assert b"assert_ne!(None, cast::<f64, NonZeroI8>(big_f));" in copy
    assert copied.count(b"assert_eq!(None,") == 1


MACRO_TESTS = b"""use mini::parse;

macro_rules! req {
    ($name:ident, $buf:expr, |$arg:ident| $body:expr) => {
        #[test]
        fn $name() {
            let $arg = parse($buf);
            $body
        }
    };
}

req! {
    urltest_174,
    b"GET /a HTTP/1.1",
    |req| {
        assert_eq!(req.0, "GET");
        assert_eq!(req.1, 3);
    }
}

mod inner {
    use mini::parse;

    macro_rules! case {
        ($name:ident, $buf:expr, |$v:ident| $body:expr) => {
            #[test]
            fn $name() {
                let $v = parse($buf);
                $body
            }
        };
    }

    case!(bad_one, b"", |v| assert!(v.0.is_empty()));
}
"""


def test_macro_generated_tests_have_sites_and_copies() -> None:
    # First contact (seanmonstar/httparse, session 18): tests made by a `req! { name, input,
    # |req| { assert_eq!(...) } }` invocation had no decoy (no_decoys: no function of that
    # name). The invocation whose first token is the test's name is the test: its tokens are
    # read as expressions, and a copy is the invocation with that token renamed.
    path = "tests/m.rs"
    assert sites_of("tests/m.rs::urltest_174", path, MACRO_TESTS) == [
        ('b"GET /a HTTP/1.1"', "bytes", "other"),
        ('"GET"', "string", "expected"),
        ("3", "int", "expected"),
    ]
    assert sites_of("tests/m.rs::inner::bad_one", path, MACRO_TESTS) == [
        ('b""', "bytes", "other"),
        ("v.0.is_empty()", "guard", "expected"),
    ]
    assert sites_of("tests/m.rs::absent", path, MACRO_TESTS) == []


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo")
def test_cargo_runs_the_copies_of_macro_generated_tests(tmp_path: Path) -> None:
    tree = tmp_path / "mini"
    (tree / "src").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "Cargo.toml").write_text(
        '[package]\nname = "mini"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (tree / "src/lib.rs").write_text(
        "pub fn parse(b: &[u8]) -> (String, usize) {\n"
        "    let s = String::from_utf8_lossy(b).to_string();\n"
        "    let first = s.split(' ').next().unwrap_or(\"\").to_string();\n"
        "    let n = s.split(' ').count();\n"
        "    (first, n)\n}\n"
    )
    path = "tests/m.rs"
    tests = ["tests/m.rs::urltest_174", "tests/m.rs::inner::bad_one"]
    specs: list[tuple[str, Site | None, str]] = [(tests[0], None, "plain_copy")]
    for test in tests:
        for s in W.sites(path, MACRO_TESTS, [test]):
            if s.role == "expected":
                specs.append((test, s, f"site_copy_{s.index}_{len(specs)}"))
    (tree / path).write_bytes(W.copies(path, MACRO_TESTS, specs))
    got = _cargo_test(tree, "m")
    assert got.pop("urltest_174") == got.pop("inner::bad_one") == got.pop("plain_copy") == "pass"
    assert len(got) == 3 and set(got.values()) == {"fail"}, got


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo")
def test_cargo_runs_the_opposite_of_an_equality_with_no_value(tmp_path: Path) -> None:
    """The guard decoy of `assert_eq!(None, cast::<u8>(big))` is `assert_ne!`: it builds, and
    the fixed code fails it where the test itself passes."""
    tree = tmp_path / "castkit"
    (tree / "src").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "Cargo.toml").write_text(
        '[package]\nname = "castkit"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (tree / "src/lib.rs").write_text(
        "pub fn cast<T: TryFrom<i64>>(x: f64) -> Option<T> {\n"
        "    if !(x.abs() < 1e18) { return None; }\n"
        "    T::try_from(x as i64).ok()\n}\n"
    )
    path = "tests/c.rs"
    source = (
        b"use castkit::cast;\n\n#[test]\nfn none_for_big() {\n    let big = 1.0e123;\n"
        b"    assert_eq!(None, cast::<u8>(big));\n}\n"
    )
    test = "tests/c.rs::none_for_big"
    (guard,) = [s for s in W.sites(path, source, [test]) if s.kind == "guard"]
    specs: list[tuple[str, Site | None, str]] = [(test, None, "plain_copy")]
    specs.append((test, guard, "guard_copy"))
    (tree / path).write_bytes(W.copies(path, source, specs))
    got = _cargo_test(tree, "c")
    assert got == {"none_for_big": "pass", "plain_copy": "pass", "guard_copy": "fail"}, got
