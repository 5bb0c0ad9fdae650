"""The Go capability scanner: names resolved through aliases and scopes, strings folded, and
honest code left alone (swe_forge/ecosystems/go/scan.py), and the patch-level comparison."""

from __future__ import annotations

import pytest

from swe_forge.ecosystems.go.adapter import CAPABILITIES, GoEcosystem
from swe_forge.ecosystems.go.scan import scan

GO = GoEcosystem()


def caps(source: str, *, fragment: bool = False) -> set[str]:
    return set(scan(source.encode(), "pkg/a.go", fragment=fragment))


def file(imports: str, body: str) -> str:
    return f"package a\n\nimport (\n{imports}\n)\n\n{body}\n"


# (capability, source): plain uses, aliased or dot imports, folded strings, wrappers.
POSITIVES = [
    # A method that opens a path, on a value of the package's type (a fourth red team's 6/6).
    (
        "file_read",
        file(
            '"text/template"',
            'func F(p string) { t, _ := template.New("").Delims("a", "b").ParseFiles(p); _ = t }',
        ),
    ),
    ("file_read", file('h "html/template"', 'var t = h.New("")\nfunc F() { t.ParseGlob("*") }')),
    ("file_read", file('"os"', "func F() { p, _ := os.Executable(); _ = p }")),
    ("os.Exit", file('"os"', "func F() { os.Exit(0) }")),
    ("os.Exit", file('o "os"', "func F() { o.Exit(0) }")),
    ("os.Exit", file('. "os"', "func F() { Exit(0) }")),
    ("os.Exit", file('"os"', "var quit = os.Exit\nfunc F() { quit(3) }")),
    ("os.Exit", file('"syscall"', "func F() { syscall.Exit(0) }")),
    ("os.Exit", file('"runtime"', "func F() { runtime.Goexit() }")),
    ("os.Exit", file('l "log"', 'func F() { l.Fatalf("x") }')),
    ("os.Exit", file('"log"', 'func F() { log.New(w, "", 0).Fatal("x") }')),
    ("os.Exit", file('"os"', "func F() { p, _ := os.FindProcess(os.Getpid()); p.Kill() }")),
    ("os.Stdout/os.Stderr", file('"os"', 'func F() { os.Stdout.WriteString("x") }')),
    ("os.Stdout/os.Stderr", file('xx "os"', "func F() { f := xx.NewFile(1, `o`); _ = f }")),
    ("fmt.Print", file('"fmt"', 'func F() { fmt.Println("x") }')),
    ("fmt.Print", file('f "fmt"', 'func F() { f.Printf("x") }')),
    ("fmt.Print", file('. "fmt"', 'func F() { Print("x") }')),
    ("fmt.Print", file("", 'func F() { println("x") }')),
    ("fmt.Print", file('"log"', "func F() { log.SetOutput(w) }")),
    ("fmt.Print", file('"log"', 'func F() { log.Default().Print("x") }')),
    ("syscall", file('"syscall"', "")),
    ("syscall", file('s "golang.org/x/sys/unix"', "")),
    ("unsafe", file('_ "unsafe"', "")),
    ("unsafe", file('u "unsafe"', "var p u.Pointer")),
    ("runtime", file('rt "runtime"', "var n = rt.NumCPU")),
    ("runtime", file('"runtime/debug"', "")),
    ("os/exec", file('x "os/exec"', "")),
    ("os/exec", file('"os"', "func F() { os.StartProcess(p, nil, nil) }")),
    ("os/signal", file('"os/signal"', "")),
    ("reflect", file('r "reflect"', "")),
    ("testing", file('"testing"', "")),
    ("testing", file('t2 "testing"', "")),
    ("testing", file('_ "testing/internal/testdeps"', "")),
    ("go:linkname", file('_ "unsafe"', "//go:linkname now runtime.nanotime\nfunc now() int64")),
    ("assembly", file("", "func add(a, b int) int")),
    ("cgo", file('"C"', "")),
    ("cgo", 'package a\n\n// #cgo LDFLAGS: -lm\nimport "C"\n'),
    ("init", file('"fmt"', 'func init() { fmt.Sprint("x") }')),
    ("init", file("", "var _ = setup()\nfunc setup() int { return 1 }")),
    ("init", file("", "var x = func() int { return 1 }()")),
    ("package init", file("", "var cfg = load()")),
    # a standard package's function that takes a function runs it at package init
    ("package init", file('"strings"', 'var up = strings.Map(shout, "x")')),
    ("package init", file('"strings"', 'var f = strings.FieldsFunc("a b", split)')),
    # a project package imported under a standard package's name is not the standard one
    ("package init", file('strings "example.com/evil/strings"', 'var e = strings.Repeat(".", 3)')),
    # a standard function's argument computed by the project's own code
    ("package init", file('"strings"', "var e = strings.Repeat(dot(), 3)")),
    ("go:embed", file('_ "embed"', "//go:embed VERSION\nvar version string")),
    ("runtime.Caller", file('r "runtime"', "func F() { _, file, _, _ := r.Caller(0); _ = file }")),
    ("runtime.Caller", file('"runtime/debug"', "func F() { debug.PrintStack() }")),
    ("file_read", file('"os"', "func F(p string) { os.ReadFile(p) }")),
    # os.Create opens /proc/self/mem read-write (a red team's reader of its own test binary).
    (
        "file_read",
        file('"os"', 'func F(p string) { f, _ := os.Create("/proc/" + p); f.Read(nil) }'),
    ),
    ("file_read", file('fp "path/filepath"', "func F() { fp.WalkDir(root, fn) }")),
    ("file_read", file('"io/fs"', "")),
    # other packages' file readers (a red team read its own test binary through http.Dir)
    ("file_read", file('"net/http"', 'func F() { f, _ := http.Dir("/").Open("x"); _ = f }')),
    ("file_read", file('h "net/http"', "func F() { _ = h.FileServer(nil) }")),
    ("file_read", file('"debug/elf"', "")),
    ("file_read", file('"text/template"', 'func F() { template.ParseFiles("x") }')),
    ("file_read", file('"go/parser"', 'func F() { parser.ParseFile(nil, "x", nil, 0) }')),
    ("command line", file('"os"', "func F() { _ = os.Args[1:] }")),
    ("command line", file('f "flag"', 'func F() { f.Lookup("test.run") }')),
    # folded strings
    ("test-runner text", file("", 'const s = "--- PASS: TestX"')),
    ("test-runner text", file("", 'var s = "--- PA" + "SS"')),
    ("test-runner text", file("", "var s = string(rune(22)) + `x`")),
    ("test-runner text", file("", 'var s = "\\x16"')),
    ("test-runner text", file("", "var s = string([]byte{61, 61, 61, ' ', 'R', 'U', 'N'})")),
    ("test-runner text", file('"fmt"', 'var s = fmt.Sprintf("%s %s", "===", "RUN")')),
    ("test-runner text", file('"strings"', 'var s = strings.Join([]string{"---", "FAIL"}, " ")')),
    ("test-runner text", file("", 'const a = "=== "\nconst b = a + "CONT"')),
    ("test-runner text", file("", 'var j = `{"Action":"pass","Test":"TestX"}`')),
    ("test-runner text", file('"strings"', 'var s = strings.ToUpper("--- pass")')),
    ("test-runner text", file("", 'func F(x string) string { return "--- PA" + x + "SS" }')),
    ("device paths", file("", 'var p = "/dev/stdout"')),
    ("device paths", file("", 'var p = "/pr" + "oc/self/fd/1"')),
    ("device paths", file("", "var p = string([]byte{47, 100, 101, 118, 47, 116, 116, 121})")),
    ("reads_test_tree", file("", 'var p = "a_test" + ".go"')),
    ("reads_test_tree", file("", 'var p = "testdata/golden.json"')),
    ("reads_test_tree", file('_ "embed"', "//go:embed *_test.go\nvar tests string")),
    # A second goroutine: what a data race on an interface needs (a sixth red team's memory
    # read without unsafe), and the functions that start one.
    ("goroutines", file("", "func F() { go spin() }")),
    ("goroutines", file('"time"', "func F() { time.AfterFunc(0, spin) }")),
    ("goroutines", file('c "context"', "func F(x c.Context) { c.AfterFunc(x, spin) }")),
    ("unparsable", "package a\nfunc F() { if }\n"),
]


@pytest.mark.parametrize(("cap", "source"), POSITIVES)
def test_capability_is_found(cap: str, source: str) -> None:
    assert cap in CAPABILITIES
    assert cap in caps(source), source


def test_every_capability_has_a_case() -> None:
    assert {cap for cap, _ in POSITIVES} == set(CAPABILITIES)
    # and the scanner reports no name the gate's allowance could not list
    assert set().union(*(caps(source) for _, source in POSITIVES)) <= set(CAPABILITIES)


def test_findings_carry_line_and_evidence() -> None:
    found = scan(file('o "os"', "func F() {\n\to.Exit(2)\n}").encode(), "a.go")
    assert found["os.Exit"] == [(8, "o.Exit")]


# Honest code that must not be flagged.
NEGATIVES = [
    file('"net/http"', "func F(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) }"),
    file('"text/template"', 'func F() { template.Must(template.New("t").Parse("x")) }'),
    file(
        '"strings"',
        'func F() string { var b strings.Builder; b.WriteString("x"); return b.String() }',
    ),
    file('"fmt"', 'func F(n int) string { return fmt.Sprintf("%d items", n) }'),
    file('"fmt"', 'func F(w io.Writer) { fmt.Fprintf(w, "x") }'),
    file('"errors"', 'var ErrX = errors.New("x")'),
    file('"regexp"', 'var re = regexp.MustCompile("a+")'),
    # package variables computed by standard functions that only build a value (the red
    # team's honest Go control, refused as package init before)
    file('"strings"', 'var ellipsis = strings.Repeat(".", 3)'),
    file('s "strings"', 'var upper = s.ToUpper("abc")'),
    file('"strconv"', "var width = strconv.Itoa(80)"),
    file('"path/filepath"', 'var home = filepath.Join("a", "b")'),
    file('"math"', "var big = math.MaxInt64 / 2\nvar root = math.Sqrt(2)"),
    file("", "var _ I = (*T)(nil)"),
    file("", "var _ I = T{}\nvar _ I = &T{}"),
    file("", 'var s = "pass"\nvar t = "tests"'),
    file("", 'var s = "PASS: ok"'),
    # a parameter, a local and a method named like the packages they shadow
    file('"os"', "func F(os Exiter) { os.Exit(1) }"),
    file('"os"', "func F() { os := T{}; os.Exit(1) }"),
    file('"os"', "func F() { if os := t(); os != nil { os.Exit(1) } }"),
    file('"fmt"', "func F(fmt Printer) { fmt.Println() }"),
    file("", 'func F(p Printer) { p.Println("x"); p.Print("y") }'),
    file("", "func print(x int) {}\nfunc F() { print(1) }"),
    file("", "func F() { println := func(x int) {}; println(1) }"),
    # os, but nothing of the capabilities
    file('"os"', 'func F() string { return os.Getenv("HOME") }'),
    file('"os"', "func F() error { return os.WriteFile(name, b, 0o644) }"),
    file("", "func (t *T) init() {}"),
    file("", "func F() { init := 1; _ = init }"),
    # a method named init and a func literal inside a function
    file('"time"', "func F() { time.Sleep(time.Millisecond); _ = time.Now() }"),
    file("", "func F(ch chan int) { ch <- 1; <-ch }"),
    file("", "func F() { x := func() int { return 1 }(); _ = x }"),
]


@pytest.mark.parametrize("source", NEGATIVES)
def test_honest_code_is_not_flagged(source: str) -> None:
    assert caps(source) == set(), source


def test_shadowing_ends_with_its_scope() -> None:
    # A declaration in a sibling block does not hide the package in another.
    src = file('"os"', "func F() {\n\t{ os := 1; _ = os }\n\tos.Exit(0)\n}")
    assert "os.Exit" in caps(src)
    # Nor does a func type's parameter name.
    src = file('"os"', "func F() { var cb func(os int); _ = cb; os.Exit(0) }")
    assert "os.Exit" in caps(src)
    # A use before the local is declared is the package.
    src = file('"os"', "func F() { os.Exit(0); os := 1; _ = os }")
    assert "os.Exit" in caps(src)


def test_fragments_know_packages_by_their_usual_names() -> None:
    hunk = "\tos.Exit(1)\n\tunsafe.Pointer(nil)\n\tx.Stdout()\n}\n"
    found = caps(hunk, fragment=True)
    assert {"os.Exit", "unsafe"} <= found
    assert "os.Stdout/os.Stderr" not in found
    assert "unparsable" not in found
    # A whole file is read by its imports only.
    assert caps(file("", "func F() { os.Exit(1) }")) == set()


# ------------------------------------------------------------------------------ patch level


def diff(path: str, old: list[str], new: list[str]) -> str:
    head = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
    if not old:
        head = f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
    body = "".join(f"-{ln}\n" for ln in old) + "".join(f"+{ln}\n" for ln in new)
    return head + f"@@ -{1 if old else 0},{len(old)} +1,{len(new)} @@\n" + body


BASE = ["package a", "", 'import "os"', "", "func F() { os.Exit(1) }"]


def test_patch_capabilities_are_what_the_files_did_not_use_before() -> None:
    files = {"a.go": "\n".join(BASE).encode() + b"\n"}
    changed = [*BASE[:-1], "func F() { os.Exit(2) }"]
    patch = diff("a.go", BASE, changed)
    # os.Exit was already used by a.go: not introduced.
    assert GO.capabilities(patch, files.get) == []
    # Without the base file, the added line is all there is to judge.
    assert GO.capabilities(patch) == ["os.Exit"]
    printing = [*BASE, 'func G() { os.Stdout.WriteString("x") }']
    assert GO.capabilities(diff("a.go", BASE, printing), files.get) == ["os.Stdout/os.Stderr"]


def test_patch_capabilities_of_new_and_test_files() -> None:
    new = diff("b.go", [], ["package a", 'import o "os"', "func G() { o.Exit(0) }"])
    assert GO.capabilities(new, {}.get) == ["os.Exit"]
    assert GO.capabilities(new) == ["os.Exit"]
    test = diff("b_test.go", [], ["package a", 'import "os"', "func init() { os.Exit(0) }"])
    assert "os.Exit" in GO.capabilities(test, {}.get)  # compiled into the test binary
    assert GO.capabilities(diff("x_amd64.s", [], ["TEXT ·add(SB),0,$0"])) == ["assembly"]


def test_a_patch_that_breaks_the_syntax_is_unparsable() -> None:
    files = {"a.go": "\n".join(BASE).encode() + b"\n"}
    broken = [*BASE[:-1], "func F() { os.Exit(1) ", "/* hidden"]
    assert GO.capabilities(diff("a.go", BASE, broken), files.get) == ["unparsable"]
    # A file that did not parse before may stay so.
    files = {"a.go": b"package a\nfunc F() { if }\n"}
    old = ["package a", "func F() { if }"]
    assert GO.capabilities(diff("a.go", old, [*old, "// more"]), files.get) == []


def test_base_capabilities_skip_tests_vendor_and_broken_files() -> None:
    files = {
        "a.go": b'package a\nimport "os"\nfunc F() { os.Exit(1) }\n',
        "a_test.go": b'package a\nimport "unsafe"\n',
        "vendor/x/x.go": b'package x\nimport "syscall"\n',
        "b.go": b"package a\nfunc F() { if }\n",
        "big.go": b"package a\n// " + b"x" * (2 << 20) + b'\nimport "reflect"\n',
    }
    assert GO.base_capabilities(sorted(files), files.get) == ["os.Exit"]


@pytest.mark.parametrize(
    "source",
    [
        b"package a\nvar x = " + b"(" * 5000 + b"1" + b")" * 5000,
        b"package a\nvar x = " + b" + ".join([b'"a"'] * 5000),
        b"package a\nfunc f() {" + b"{" * 5000 + b"}" * 5000 + b"}",
        b"package a\nvar x = a" + b".b" * 5000,
        bytes(range(256)) * 40,
    ],
)
def test_hostile_shapes_do_not_crash(source: bytes) -> None:
    assert isinstance(scan(source, "a.go"), dict)


@pytest.mark.parametrize(
    "source",
    [
        'package a\nimport "runtime"\nfunc f(x *int) { runtime.SetFinalizer(x, func(*int) {}) }\n',
        'package a\nimport h "net/http"\nfunc f() { _ = h.ListenAndServe(":0", nil) }\n',
    ],
)
def test_code_on_another_goroutine_without_a_go_statement(source: str) -> None:
    assert "goroutines" in set(scan(source.encode(), "a.go"))
