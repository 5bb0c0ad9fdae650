"""The Go scan's rules: the capabilities it reports and the tables that make each one.

Tables only, nothing that reads a file: import paths that are a capability by being
imported, package members that are one wherever they are referred to, methods that end the
process or open a path on any receiver, the usual names of the packages a hunk refers to,
text shaped like test2json's frames, and what a package-level initialiser may call. Kept apart
from the walk that applies them (:mod:`swe_forge.ecosystems.go.scan_walk`) so that the rules
read (and change) on their own.
"""

from __future__ import annotations

import re

from swe_forge.ecosystems.scanning import UNPARSABLE

EXIT = "os.Exit"
STDOUT = "os.Stdout/os.Stderr"
PRINT = "fmt.Print"
SYSCALL = "syscall"
UNSAFE = "unsafe"
RUNTIME = "runtime"
EXEC = "os/exec"
SIGNAL = "os/signal"
REFLECT = "reflect"
TESTING = "testing"
LINKNAME = "go:linkname"
CGO = "cgo"
INIT = "init"
RUNNER_TEXT = "test-runner text"
PACKAGE_INIT = "package init"
EMBED = "go:embed"
ASSEMBLY = "assembly"
CALLER = "runtime.Caller"
FILE_READ = "file_read"
TEST_TREE = "reads_test_tree"
DEVICE = "device paths"
COMMAND_LINE = "command line"
GOROUTINES = "goroutines"

#: Every capability this scanner reports.
CAPABILITIES = (
    ASSEMBLY,
    CGO,
    COMMAND_LINE,
    DEVICE,
    EMBED,
    LINKNAME,
    FILE_READ,
    GOROUTINES,
    PRINT,
    INIT,
    EXIT,
    STDOUT,
    EXEC,
    SIGNAL,
    PACKAGE_INIT,
    TEST_TREE,
    REFLECT,
    RUNTIME,
    CALLER,
    SYSCALL,
    RUNNER_TEXT,
    TESTING,
    UNSAFE,
    UNPARSABLE,
)

#: Import paths that are a capability by being imported (under any name, even ``_``).
_IMPORTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^syscall$|^golang\.org/x/sys(/|$)"), SYSCALL),
    (re.compile(r"^unsafe$"), UNSAFE),
    (re.compile(r"^runtime(/|$)"), RUNTIME),
    (re.compile(r"^os/exec$"), EXEC),
    (re.compile(r"^os/signal$"), SIGNAL),
    (re.compile(r"^reflect$"), REFLECT),
    (re.compile(r"^testing(/|$)"), TESTING),
    (re.compile(r"^C$|^plugin$"), CGO),
    (re.compile(r"^io/fs$"), FILE_READ),
    # Readers of executables and object files: the test binary holds the tests' literals.
    (re.compile(r"^debug/(elf|macho|pe|plan9obj|gosym|dwarf|buildinfo)$"), FILE_READ),
)

#: Package members (import path, name) that are a capability wherever they are referred to
#: (called or taken as a value).
_MEMBERS: dict[tuple[str, str], str] = {
    **{("os", n): EXIT for n in ("Exit", "FindProcess")},
    ("os", "StartProcess"): EXEC,
    **{("syscall", n): EXIT for n in ("Exit", "Kill", "Tgkill")},
    **{("golang.org/x/sys/unix", n): EXIT for n in ("Exit", "Kill", "Tgkill")},
    ("runtime", "Goexit"): EXIT,
    **{("log", n): EXIT for n in ("Fatal", "Fatalf", "Fatalln")},
    **{("os", n): STDOUT for n in ("Stdout", "Stderr", "NewFile")},
    **{("syscall", n): STDOUT for n in ("Stdout", "Stderr", "Dup2", "Dup3", "Write")},
    **{("golang.org/x/sys/unix", n): STDOUT for n in ("Stdout", "Stderr", "Dup2", "Dup3")},
    **{("fmt", n): PRINT for n in ("Print", "Printf", "Println")},
    **{("log", n): PRINT for n in ("Print", "Printf", "Println", "SetOutput", "Writer", "Default")},
    **{
        ("runtime", n): CALLER for n in ("Caller", "Callers", "CallersFrames", "FuncForPC", "Stack")
    },
    **{("runtime/debug", n): CALLER for n in ("Stack", "PrintStack")},
    # os.Create opens an existing path read-write (a red team read /proc/self/mem through it).
    **{
        ("os", n): FILE_READ
        for n in (
            "ReadFile",
            "Open",
            "OpenFile",
            "Create",
            "ReadDir",
            "DirFS",
            "Readlink",
            "OpenRoot",
            # The test binary's own path: what a twin reads its literals from.
            "Executable",
        )
    },
    **{("io/ioutil", n): FILE_READ for n in ("ReadFile", "ReadDir")},
    # Files read by other packages than os (a red team read its own test binary through
    # http.Dir): every standard-library function that opens a path it is given.
    **{
        ("net/http", n): FILE_READ
        for n in ("Dir", "FileServer", "FileServerFS", "ServeFile", "ServeFileFS", "FS")
    },
    **{("archive/zip", n): FILE_READ for n in ("OpenReader",)},
    **{("text/template", n): FILE_READ for n in ("ParseFiles", "ParseGlob", "ParseFS")},
    **{("html/template", n): FILE_READ for n in ("ParseFiles", "ParseGlob", "ParseFS")},
    **{("go/parser", n): FILE_READ for n in ("ParseFile", "ParseDir")},
    **{("go/build", n): FILE_READ for n in ("Import", "ImportDir", "Default")},
    **{("path/filepath", n): FILE_READ for n in ("Walk", "WalkDir", "Glob")},
    # Functions that run code on a goroutine of their own (see ``go_statement`` in scan_walk).
    ("time", "AfterFunc"): GOROUTINES,
    ("context", "AfterFunc"): GOROUTINES,
    # Finalizers and cleanups run on the runtime's own goroutine; a server's handlers on one
    # each (a thirteenth red team's untried route to a race without a go statement).
    ("runtime", "SetFinalizer"): GOROUTINES,
    ("runtime", "AddCleanup"): GOROUTINES,
    **{
        ("net/http", n): GOROUTINES
        for n in ("Serve", "ServeTLS", "ListenAndServe", "ListenAndServeTLS")
    },
    ("os", "Args"): COMMAND_LINE,
    **{
        ("flag", n): COMMAND_LINE
        for n in (
            "CommandLine",
            "Lookup",
            "Set",
            "Visit",
            "VisitAll",
            "Parse",
            "Parsed",
            "Args",
            "Arg",
            "NArg",
            "NFlag",
        )
    },
}
#: Methods that end the process on any logger (log.Logger, logrus, zap's sugar, klog...).
_FATAL_METHODS = frozenset({"Fatal", "Fatalf", "Fatalln"})
#: Methods that open the paths they are given, on any receiver: a type's methods are not
#: the package's functions (a fourth red team read its own test binary through
#: ``template.New("").Delims(a, b).ParseFiles(path)`` with the function form gated).
_READING_METHODS = frozenset({"ParseFiles", "ParseGlob"})

#: Default names of the packages a hunk refers to when its file's imports are not in view.
_DEFAULT_NAMES = {
    "os": "os",
    "fmt": "fmt",
    "log": "log",
    "syscall": "syscall",
    "unix": "golang.org/x/sys/unix",
    "runtime": "runtime",
    "debug": "runtime/debug",
    "reflect": "reflect",
    "unsafe": "unsafe",
    "exec": "os/exec",
    "signal": "os/signal",
    "testing": "testing",
    "ioutil": "io/ioutil",
    "filepath": "path/filepath",
    "fs": "io/fs",
    "flag": "flag",
    "http": "net/http",
    "time": "time",
    "context": "context",
}

#: Text shaped like what test2json and the test binary print: a test's verdict line, its
#: framing byte (\x16, Go 1.24+) or a JSON event.
_RUNNER_TEXT = re.compile(
    r"--- (?:PASS|FAIL|SKIP|BENCH)|=== (?:RUN|PAUSE|CONT|NAME)|\x16|\"Action\"\s*:"
)

#: Calls in a package-level initialiser that only build a value (no code of the package runs).
_PURE_CALLS = frozenset(
    {
        "make",
        "new",
        "len",
        "cap",
        "append",
        "complex",
        "min",
        "max",
        "errors.New",
        "fmt.Errorf",
        "regexp.MustCompile",
        "regexp.MustCompilePOSIX",
        "strings.NewReplacer",
        "template.Must",
        "template.New",
        "reflect.TypeOf",
        "big.NewInt",
        "time.Date",
        "sync.NewCond",
    }
)

#: Standard packages whose functions only compute a value from their arguments: no files, no
#: process, no interface argument through which a method of the project would run. A package
#: initialiser may call them (``var ellipsis = strings.Repeat(".", 3)``). ``None``: every
#: function of the package but those that take a function (``*Func``, ``Map``); else the
#: functions named.
_PURE_PACKAGES: dict[str, frozenset[str] | None] = {
    "strings": None,
    "bytes": None,
    "strconv": None,
    "unicode": None,
    "unicode/utf8": None,
    "unicode/utf16": None,
    "math": None,
    "math/bits": None,
    "math/cmplx": None,
    "path": None,
    "path/filepath": frozenset(
        {"Join", "Base", "Dir", "Ext", "Clean", "ToSlash", "FromSlash", "Split", "IsAbs"}
    ),
    "regexp": frozenset({"MustCompile", "MustCompilePOSIX", "QuoteMeta"}),
    "time": frozenset({"Date", "Unix", "UnixMilli", "UnixMicro", "FixedZone", "ParseDuration"}),
    "errors": frozenset({"New"}),
    "encoding/hex": frozenset({"EncodeToString", "DecodeString", "EncodedLen", "DecodedLen"}),
    "encoding/base64": frozenset({"NewEncoding"}),
    "encoding/base32": frozenset({"NewEncoding"}),
    "html": frozenset({"EscapeString", "UnescapeString"}),
    "net/url": frozenset({"QueryEscape", "PathEscape", "QueryUnescape", "PathUnescape"}),
    "net": frozenset({"ParseIP", "ParseCIDR", "IPv4", "IPv4Mask", "CIDRMask", "ParseMAC"}),
    "math/big": frozenset({"NewInt", "NewFloat", "NewRat"}),
    "hash/crc32": frozenset({"MakeTable", "ChecksumIEEE", "Checksum"}),
    "hash/crc64": frozenset({"MakeTable", "Checksum"}),
}
#: Functions of the packages above that take a function (it would run at package init).
_HIGHER_ORDER = re.compile(r"Func|^Map$")
