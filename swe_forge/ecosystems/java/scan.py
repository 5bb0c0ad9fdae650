"""Which capabilities a Java source file uses, read on its syntax tree (tree-sitter).

A candidate's main code runs in the JVM that Surefire runs the tests in: it can halt the JVM
before the report is written, print what Maven's console reader takes for a verdict, reach
JUnit and Surefire by reflection, read the held-out test classes, or run code when a class
loads. The gate refuses a patch that newly uses such a capability
(:func:`swe_forge.ecosystems.base.source_capabilities`); this module only says which ones a
file uses, with the line and the code as evidence.

The file is read as javac reads it: Unicode escapes are translated first (``\\u0053ystem`` is
``System``, and ``\\u000a`` ends a comment). Names are resolved, not matched as text:

- imports (single, on demand, static), ``java.lang``, classes of the file and fully
  qualified names give each class its real name;
- expressions get the types they can be (``Runtime.getRuntime()`` is a Runtime, so is a
  variable declared or cast as one), so ``rt.halt(0)``, ``Runtime.getRuntime()::halt`` and
  ``Runtime::halt`` are all the JVM halting;
- strings are folded: ``"a" + "b"``, chars and ``(char) 47``, ``String.valueOf``,
  ``Character.toString``, ``new String(new char[]{...})``, ``String.join``, ``concat``,
  ``StringBuilder.append`` chains, ``String.format``, constants by name, and path pieces
  (``Paths.get("src", "test")`` is ``src/test``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.base import (
    UNPARSABLE,
    Findings,
    Parents,
    add_finding,
    decode_escapes,
    postorder,
    text_capabilities,
)

EXIT = "System.exit"
STDOUT = "System.out/err"
PROPERTIES = "system properties"
REFLECTION = "reflection"
UNSAFE = "Unsafe"
PROCESSES = "processes"
INSTRUMENTATION = "instrumentation"
SERVICE_LOADER = "ServiceLoader"
ANNOTATION_PROCESSING = "annotation processing"
NATIVE = "native code"
FILE_WRITES = "file writes"
FRAMEWORK = "test framework"
RUNNER_TEXT = "test-runner text"
FILE_READ = "file_read"
TEST_TREE = "reads_test_tree"
DEVICE = "device paths"
STACK = "stack traces"
STATIC_INIT = "static init"
STATIC_FIELD_INIT = "static field init"
UNCAUGHT = "uncaught handler"
STRING_POOL = "string pool"
PACKAGE_PLACE = "package location"
STRING_IDENTITY = "string identity"

#: Every capability this scanner reports.
CAPABILITIES = (
    PACKAGE_PLACE,
    STRING_IDENTITY,
    ANNOTATION_PROCESSING,
    DEVICE,
    FILE_READ,
    FILE_WRITES,
    INSTRUMENTATION,
    NATIVE,
    PROCESSES,
    TEST_TREE,
    REFLECTION,
    SERVICE_LOADER,
    STACK,
    STATIC_FIELD_INIT,
    STATIC_INIT,
    STRING_POOL,
    EXIT,
    STDOUT,
    PROPERTIES,
    FRAMEWORK,
    RUNNER_TEXT,
    UNCAUGHT,
    UNSAFE,
    UNPARSABLE,
)

#: Packages and classes (by qualified name) whose mere use is a capability: a prefix ending
#: in "." is a package, anything else a class (and its members and nested classes).
_TYPES: tuple[tuple[str, str], ...] = tuple(
    (name, cap)
    for cap, names in {
        REFLECTION: (
            "java.lang.reflect.",
            "java.lang.invoke.",
            "java.lang.ClassLoader",
            "java.net.URLClassLoader",
            "java.security.SecureClassLoader",
        ),
        UNSAFE: ("sun.misc.", "sun.reflect.", "jdk.internal.", "jdk.unsupported."),
        PROCESSES: ("java.lang.ProcessBuilder", "java.lang.ProcessHandle", "java.lang.Process"),
        INSTRUMENTATION: (
            "java.lang.instrument.",
            "com.sun.tools.attach.",
            "java.lang.management.",
            "javax.management.",
            "com.sun.management.",
            "jdk.jfr.",
        ),
        SERVICE_LOADER: ("java.util.ServiceLoader",),
        ANNOTATION_PROCESSING: (
            "javax.annotation.processing.",
            "javax.lang.model.",
            "com.sun.source.",
            "com.sun.tools.javac.",
        ),
        NATIVE: ("java.lang.foreign.",),
        STACK: ("java.lang.StackWalker",),
        # Identity without ==: a map of identities, or the identity hash of each string.
        STRING_IDENTITY: ("java.util.IdentityHashMap",),
        FILE_WRITES: (
            "java.io.FileOutputStream",
            "java.io.FileWriter",
            "java.io.RandomAccessFile",
            "java.nio.channels.FileChannel",
        ),
        FILE_READ: (
            "java.io.FileInputStream",
            "java.io.FileReader",
            # A path itself: whatever takes one reads what it names (a fourth red team read its
            # twin's test source through `new java.util.Scanner(File)`, on no list of readers).
            "java.io.File",
            "java.nio.file.Path",
            "java.nio.file.Paths",
            "java.nio.file.FileSystem",
            "java.nio.file.FileSystems",
            # The compiler's file managers list and read any source tree (`-sourcepath`,
            # `getCharContent`: a seventeenth red team read its test class through them).
            "javax.tools.",
            # Readers of a URI given as a string (a system id is a path).
            "javax.xml.parsers.",
            "javax.xml.transform.stream.",
            "javax.xml.stream.",
            "org.xml.sax.",
            # A URL reads what it names, "file:" included (a red team read its test source
            # and listed directories through URL.openStream).
            "java.net.URLConnection",
            "java.net.JarURLConnection",
            "java.util.zip.ZipFile",
            "java.util.jar.JarFile",
            "java.nio.channels.AsynchronousFileChannel",
        ),
        STDOUT: ("java.io.Console",),
        FRAMEWORK: (
            "org.junit.",
            "org.opentest4j.",
            "junit.framework.",
            "org.testng.",
            "org.apache.maven.",
            "org.hamcrest.",
            "org.assertj.",
        ),
    }.items()
    for name in names
)

#: Members (``Class.member`` static, ``Class#member`` of an instance) -> capability.
_MEMBERS: dict[str, str] = {
    "java.lang.System.exit": EXIT,
    "java.lang.Runtime#exit": EXIT,
    "java.lang.Runtime#halt": EXIT,
    **{
        f"java.lang.System.{m}": STDOUT
        for m in ("out", "err", "in", "console", "setOut", "setErr", "setIn", "inheritedChannel")
    },
    **{f"java.io.FileDescriptor.{m}": STDOUT for m in ("out", "err", "in")},
    **{
        f"java.lang.System.{m}": PROPERTIES
        for m in (
            "setProperty",
            "clearProperty",
            "setProperties",
            "getProperties",
            "setSecurityManager",
        )
    },
    "java.lang.Class.forName": REFLECTION,
    **{
        f"java.lang.Class#{m}": REFLECTION
        for m in (
            "forName",
            "getMethod",
            "getMethods",
            "getField",
            "getFields",
            "getConstructor",
            "getConstructors",
            "newInstance",
        )
    },
    **{
        f"java.lang.Runtime#{m}": PROCESSES
        for m in ("exec", "addShutdownHook", "removeShutdownHook")
    },
    **{f"java.lang.System.{m}": NATIVE for m in ("load", "loadLibrary", "mapLibraryName")},
    **{f"java.lang.Runtime#{m}": NATIVE for m in ("load", "loadLibrary")},
    "java.lang.Thread.setDefaultUncaughtExceptionHandler": UNCAUGHT,
    "java.lang.Thread#setUncaughtExceptionHandler": UNCAUGHT,
    "java.lang.Thread.getAllStackTraces": STACK,
    "java.lang.Thread.dumpStack": STACK,
    **{
        f"java.nio.file.Files.{m}": FILE_READ
        for m in (
            "readAllBytes",
            "readAllLines",
            "readString",
            "lines",
            "walk",
            "list",
            "find",
            "newInputStream",
            "newBufferedReader",
            "newDirectoryStream",
            "walkFileTree",
            "newByteChannel",
        )
    },
    **{f"java.io.File#{m}": FILE_READ for m in ("listFiles", "list")},
    **{f"java.net.URL#{m}": FILE_READ for m in ("openStream", "openConnection", "getContent")},
    "java.net.URI#toURL": FILE_READ,
    **{
        f"java.lang.{c}#{m}": FILE_READ
        for c in ("Class", "Module")
        for m in ("getResource", "getResourceAsStream")
    },
    **{
        f"java.nio.file.Files.{m}": FILE_WRITES
        for m in (
            "write",
            "writeString",
            "newOutputStream",
            "newBufferedWriter",
            "copy",
            "move",
            "delete",
            "deleteIfExists",
            "createFile",
            "createDirectory",
            "createDirectories",
            "createSymbolicLink",
            "createLink",
            "setPosixFilePermissions",
            "setLastModifiedTime",
            "setAttribute",
            "setOwner",
        )
    },
    **{
        f"java.io.File#{m}": FILE_WRITES
        for m in (
            "delete",
            "renameTo",
            "setWritable",
            "setReadable",
            "setExecutable",
            "createNewFile",
            "setLastModified",
        )
    },
}
#: Method names distinctive enough to be the capability on any receiver.
#: Declared types whose values may be strings (an identity test of them asks the pool).
_STRING_TYPES = frozenset({"String", "CharSequence", "Object", "Comparable", "Serializable"})
#: How many steps _stringish follows variables and elements.
_STRINGISH_DEPTH = 8
#: Methods that hand back an element of a collection (``l.get(0) == l.get(1)``): of any type,
#: Strings included.
_ELEMENT_METHODS = frozenset(
    {"get", "getFirst", "getLast", "peek", "poll", "next", "elementAt", "getKey", "getValue"}
)
#: Methods that return strings, by name (the scan knows no return types).
_STRING_METHODS = frozenset(
    {
        "toString",
        "intern",
        "getLanguage",
        "getCountry",
        "getScript",
        "getVariant",
        "getDisplayName",
        "toLanguageTag",
        "substring",
        "trim",
        "strip",
        "toLowerCase",
        "toUpperCase",
        "concat",
        "replace",
        "replaceAll",
        "valueOf",
        "format",
        "formatted",
        "join",
        "repeat",
        "name",
        "getName",
        "getSimpleName",
        "getMessage",
        "getProperty",
        "readLine",
        "nextToken",
        "copyValueOf",
    }
)
_METHOD_NAMES: dict[str, str] = {
    "halt": EXIT,
    "addShutdownHook": PROCESSES,
    "setDefaultUncaughtExceptionHandler": UNCAUGHT,
    "getStackTrace": STACK,
    "renameTo": FILE_WRITES,
    # The JVM's pool of interned strings holds every literal a loaded class has used:
    # ``new String(x).intern() != x`` tells whether a test's expected value is ``x`` (a
    # sixth red team's oracle, no file and no reflection). Any receiver: a String is one.
    "intern": STRING_POOL,
    "identityHashCode": STRING_IDENTITY,
    # Identity tests that are no ``==``: an atomic's compare-and-set compares references (a
    # thirteenth red team's pool oracle), as do a reference's ``refersTo``, a monitor's
    # ``holdsLock`` and ``Objects.toIdentityString``.
    **dict.fromkeys(
        (
            "compareAndSet",
            "weakCompareAndSet",
            "weakCompareAndSetPlain",
            "weakCompareAndSetVolatile",
            "weakCompareAndSetAcquire",
            "weakCompareAndSetRelease",
            "compareAndExchange",
            "compareAndExchangeAcquire",
            "compareAndExchangeRelease",
            "refersTo",
            "holdsLock",
            "toIdentityString",
        ),
        STRING_IDENTITY,
    ),
    **dict.fromkeys(
        (
            "setAccessible",
            "trySetAccessible",
            "getDeclaredMethod",
            "getDeclaredMethods",
            "getDeclaredField",
            "getDeclaredFields",
            "getDeclaredConstructor",
            "getDeclaredConstructors",
            "defineClass",
            "defineHiddenClass",
            "privateLookupIn",
            "loadClass",
        ),
        REFLECTION,
    ),
    **dict.fromkeys(
        (
            "getResource",
            "getResourceAsStream",
            "getResources",
            "getSystemResource",
            "getSystemResourceAsStream",
            "getSystemResources",
        ),
        FILE_READ,
    ),
}
#: What some members return (an instance of a class), so that chains keep their types.
_RETURNS: dict[str, str] = {
    "java.lang.Runtime.getRuntime": "java.lang.Runtime",
    "java.lang.Thread.currentThread": "java.lang.Thread",
    "java.lang.Class.forName": "java.lang.Class",
    "java.lang.Class#getClassLoader": "java.lang.ClassLoader",
    "java.lang.Thread#getContextClassLoader": "java.lang.ClassLoader",
    "java.lang.ClassLoader.getSystemClassLoader": "java.lang.ClassLoader",
    "java.lang.System.out": "java.io.PrintStream",
    "java.lang.System.err": "java.io.PrintStream",
    "java.nio.file.Paths.get": "java.nio.file.Path",
    "java.nio.file.Path.of": "java.nio.file.Path",
    "java.nio.file.Path#toFile": "java.io.File",
    "java.net.URI.create": "java.net.URI",
    "java.io.File#toURI": "java.net.URI",
    "java.nio.file.Path#toUri": "java.net.URI",
    "java.net.URI#toURL": "java.net.URL",
    "java.net.URL#openConnection": "java.net.URLConnection",
}
#: Classes of java.lang (known without an import).
_JAVA_LANG = frozenset(
    {
        "System",
        "Runtime",
        "Thread",
        "Class",
        "ClassLoader",
        "Process",
        "ProcessBuilder",
        "ProcessHandle",
        "StackWalker",
        "Throwable",
        "String",
        "Character",
        "StringBuilder",
        "StringBuffer",
        "Object",
        "Integer",
        "Long",
        "Boolean",
        "Math",
    }
)
#: Classes a hunk may name without its file's imports in view.
_WELL_KNOWN = {
    "Files": "java.nio.file.Files",
    "Paths": "java.nio.file.Paths",
    "Path": "java.nio.file.Path",
    "File": "java.io.File",
    "FileDescriptor": "java.io.FileDescriptor",
    "FileInputStream": "java.io.FileInputStream",
    "FileOutputStream": "java.io.FileOutputStream",
    "FileReader": "java.io.FileReader",
    "FileWriter": "java.io.FileWriter",
    "RandomAccessFile": "java.io.RandomAccessFile",
    "PrintStream": "java.io.PrintStream",
    "PrintWriter": "java.io.PrintWriter",
    "Method": "java.lang.reflect.Method",
    "Field": "java.lang.reflect.Field",
    "Constructor": "java.lang.reflect.Constructor",
    "MethodHandles": "java.lang.invoke.MethodHandles",
    "MethodHandle": "java.lang.invoke.MethodHandle",
    "VarHandle": "java.lang.invoke.VarHandle",
    "ServiceLoader": "java.util.ServiceLoader",
    "ManagementFactory": "java.lang.management.ManagementFactory",
    "Unsafe": "sun.misc.Unsafe",
}
#: Static initialisers that only build a value (no code of the project runs).
_PURE_INITS = re.compile(
    r"^(?:(?:LoggerFactory|LogManager|Logger|Log|LogFactory)\.get(?:Logger|Log)"
    r"|Pattern\.compile|Collections\.\w+|(?:List|Set|Map|EnumSet|Arrays|Stream)\.\w+"
    r"|Map\.entry|Charset\.forName|(?:Big(?:Integer|Decimal)|Integer|Long|Short|Byte|Double"
    r"|Float|Boolean|Character|String|Math|StrictMath)\.\w+|\"(?:[^\"\\]|\\.)*\"\.\w+"
    r"|Duration\.\w+|DateTimeFormatter\.\w+"
    r"|Locale\.\w+|Objects\.\w+|Optional\.\w+|ThreadLocal\.withInitial|Immutable\w+\.\w+"
    r"|\w+\.values|\w+\.class\.\w+|TimeUnit\.\w+\.\w+|ZoneId\.of|UUID\.\w+)$"
)

#: Text shaped like Surefire's reports and Maven's console lines.
_RUNNER_TEXT = re.compile(
    r"<testcase|<testsuite|\bTEST-[\w.$-]*\.xml|Tests run:|<<< (?:FAILURE|ERROR)!?"
    r"|BUILD (?:SUCCESS|FAILURE)"
)
_FRAMEWORK_TEXT = re.compile(
    r"\borg\.junit\b|\borg\.apache\.maven\b|surefire|\borg\.testng\b|\bjunit\.framework\b"
    r"|\borg\.opentest4j\b"
)
_JAVA_COMMAND = "sun.java.command"
_MAX_TEXT = 1 << 16
_MAX_DEPTH = 150
_MAX_SEGMENTS = 12

_LITERALS = frozenset(
    {
        "string_literal",
        "character_literal",
        "decimal_integer_literal",
        "hex_integer_literal",
        "octal_integer_literal",
        "binary_integer_literal",
    }
)


def unicode_escapes(source: bytes) -> bytes:
    """Java source with its Unicode escapes translated, as javac does before anything else:
    ``\\\\u+XXXX`` whose backslash is not itself escaped (preceded by an even number of
    backslashes)."""
    if b"\\u" not in source:
        return source
    text = source.decode("utf-8", "surrogateescape")
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        run = i
        while run < n and text[run] == "\\":
            run += 1
        count = run - i
        out.append("\\" * (count - 1))
        j = run
        if count % 2 == 1 and j < n and text[j] == "u":
            while j < n and text[j] == "u":
                j += 1
            digits = text[j : j + 4]
            if len(digits) == 4 and all(c in "0123456789abcdefABCDEF" for c in digits):
                code = int(digits, 16)
                # NUL would end the parser's input: written as the escape it stands for.
                out.append(chr(code) if code else "\\0")
                i = j + 4
                continue
        out.append("\\")
        i = run
    return "".join(out).encode("utf-8", "surrogateescape")


def scan(source: bytes, path: str, *, fragment: bool = False) -> Findings:
    """Capability -> [(line, evidence)] of one Java file (``fragment``: the hunks of a patch,
    read without their file's imports: well-known classes are known by their simple names)."""
    found: Findings = {}
    if len(source) > syntax.MAX_PARSE_BYTES:
        add_finding(found, UNPARSABLE, 1, f"{len(source)} bytes")
        return found
    tree = syntax.parse("java", unicode_escapes(source))
    root = tree.root_node
    if root.has_error and not fragment:
        line = next((syntax.line(n) for n in syntax.walk(root) if n.is_error or n.is_missing), 1)
        add_finding(found, UNPARSABLE, line, "syntax error")
    run = _Scan(root, found, fragment)
    run.run()
    if not fragment and run.package and path.endswith(".java"):
        # javac writes the class where its declared package says, whatever the path: a
        # class of another package (org.junit's Assert) takes that package's place.
        folder = re.sub(r"\s+", "", run.package).replace(".", "/")
        directory = path.rsplit("/", 1)[0] if "/" in path else ""
        if not (directory == folder or directory.endswith("/" + folder)):
            add_finding(found, PACKAGE_PLACE, 1, f"package {run.package} in {directory}/")
    return found


class _Scan:
    """One file's walk: names and declared types first, then every node against the rules."""

    def __init__(self, root: Any, found: Findings, fragment: bool) -> None:
        self.root = root
        self.up = Parents(root)
        self.found = found
        self.fragment = fragment
        self.imports: dict[str, str] = {}  # simple name -> qualified name
        self.on_demand: list[str] = []  # packages imported with .*
        self.static_members: dict[str, set[str]] = {}  # name -> Class.member
        self.static_on_demand: list[str] = []  # classes imported with static .*
        self.own_classes: set[str] = set()
        self.package = ""
        #: variable or field name -> the type texts and initialisers declared for it.
        self.var_types: dict[str, set[str]] = {}
        self.var_inits: dict[str, list[Any]] = {}
        self.constants: dict[str, Any] = {}
        self.memo: dict[int, frozenset[str]] = {}
        self.resolving: set[str] = set()
        self.values: dict[int, Any] = {}
        self.partial: dict[int, str] = {}

    def add(self, name: str, node: Any, evidence: str | None = None) -> None:
        add_finding(self.found, name, syntax.line(node), evidence or syntax.text(node))

    def run(self) -> None:
        self._declarations()
        self._strings()
        for node in syntax.walk(self.root):
            kind = node.type
            if kind == "import_declaration":
                self._import(node)
            elif kind == "method_invocation":
                self._invocation(node)
            elif kind == "field_access":
                self._field_access(node)
            elif kind == "method_reference":
                self._reference(node)
            elif kind == "object_creation_expression":
                self._creation(node)
            elif kind in ("type_identifier", "scoped_type_identifier"):
                self._type_mention(node)
            elif kind == "static_initializer":
                self.add(STATIC_INIT, node, "static { ... }")
            elif kind in ("field_declaration", "constant_declaration"):
                self._static_field(node)
            elif kind == "method_declaration":
                self._method(node)
            elif kind == "identifier" and (self.static_members or self.static_on_demand):
                self._static_name(node)
            elif kind == "binary_expression":
                self._identity(node)
            if kind in ("method_invocation", "identifier", "cast_expression"):
                self._escaping_runtime(node)

    # --------------------------------------------------------------------- declarations
    def _declarations(self) -> None:
        for node in syntax.walk(self.root):
            kind = node.type
            if kind == "package_declaration":
                name = next((c for c in node.named_children if "identifier" in c.type), None)
                self.package = syntax.text(name) if name is not None else ""
            elif kind == "import_declaration":
                self._import_names(node)
            elif kind in (
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
            ):
                name = node.child_by_field_name("name")
                if name is not None:
                    self.own_classes.add(syntax.text(name))
            elif kind in (
                "local_variable_declaration",
                "field_declaration",
                "constant_declaration",
            ):
                kind_node = node.child_by_field_name("type")
                for decl in node.children_by_field_name("declarator"):
                    self._variable(decl.child_by_field_name("name"), kind_node, decl)
            elif kind in ("formal_parameter", "catch_formal_parameter", "resource"):
                kind_node = node.child_by_field_name("type")
                if kind_node is None:
                    kind_node = next(
                        (c for c in node.named_children if c.type == "catch_type"), None
                    )
                self._variable(node.child_by_field_name("name"), kind_node, node)
            elif kind == "enhanced_for_statement":
                self._variable(
                    node.child_by_field_name("name"), node.child_by_field_name("type"), None
                )
            elif kind == "lambda_expression":
                # ``(p, q) -> p == q``: parameters whose type only the compiler infers
                # may be Strings (a fourteenth red team's identity test).
                params = node.child_by_field_name("parameters")
                names = (
                    [params]
                    if params is not None and params.type == "identifier"
                    else [
                        c
                        for c in (params.named_children if params else [])
                        if c.type == "identifier"
                    ]
                )
                for ident in names:
                    self.var_types.setdefault(syntax.text(ident), set()).add("?")

    def _import_names(self, node: Any) -> None:
        name = next((c for c in node.named_children if "identifier" in c.type), None)
        if name is None:
            return
        qualified = syntax.text(name).replace(" ", "")
        static = any(c.type == "static" for c in node.children)
        star = any(c.type == "asterisk" for c in node.children)
        if static and star:
            self.static_on_demand.append(qualified)
        elif static:
            owner, _, member = qualified.rpartition(".")
            self.static_members.setdefault(member, set()).add(f"{owner}.{member}")
        elif star:
            self.on_demand.append(qualified)
        else:
            self.imports[qualified.rsplit(".", 1)[-1]] = qualified

    def _identity(self, node: Any) -> None:
        """``a == b`` or ``a != b`` of two strings (or values that may be strings) is an
        identity test, and identity tells whether the JVM's pool of interned strings held a
        string already: ``new Locale(fresh).getLanguage() != fresh`` asks whether a loaded
        class uses ``fresh`` as a literal (an eleventh red team's oracle of a test's expected
        value, after ``intern`` was gated). A comparison with ``null`` or of primitives is
        none."""
        op = node.child_by_field_name("operator")
        if op is None or syntax.text(op) not in ("==", "!="):
            return
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or {"null_literal", "this"} & {left.type, right.type}:
            return  # ``o == this``: equals' own first question, not the pool's
        if self._stringish(left) or self._stringish(right):
            self.add(STRING_IDENTITY, node, syntax.text(node)[:120])

    def _stringish(self, node: Any, depth: int = 0) -> bool:
        """The expression may be a String by what the file says of it (variables followed to
        what they were given, a few steps: ``a = a[0]`` must not loop)."""
        if depth > _STRINGISH_DEPTH:
            return False
        while node.type in ("parenthesized_expression", "cast_expression"):
            if node.type == "cast_expression":
                kind = node.child_by_field_name("type")
                if kind is not None and syntax.text(kind) in _STRING_TYPES:
                    return True
                node = node.child_by_field_name("value") or node
                if node.type == "cast_expression":
                    continue
            if node.type == "parenthesized_expression":
                if not node.named_children:
                    return False
                node = node.named_children[0]
        kind = node.type
        if kind in ("string_literal", "text_block"):
            return True
        if kind in ("array_access", "field_access"):
            # An element of an array of them (``pair[0]``), a field declared as one.
            inner = node.child_by_field_name("array" if kind == "array_access" else "field")
            return inner is not None and self._stringish(inner, depth + 1)
        if kind == "identifier":
            name = syntax.text(node)
            declared = {t.rsplit(".", 1)[-1] for t in self.var_types.get(name, ())}
            if declared & _STRING_TYPES or (declared and all(len(t) == 1 for t in declared)):
                return True  # a type parameter, or a lambda's inferred "?"
            # ``var x = <a String>``: judged by what it was given.
            return any(self._stringish(v, depth + 1) for v in self.var_inits.get(name, ())[:4])
        if kind == "method_invocation":
            name = node.child_by_field_name("name")
            return name is not None and (
                syntax.text(name) in _STRING_METHODS or syntax.text(name) in _ELEMENT_METHODS
            )
        if kind == "object_creation_expression":
            made = node.child_by_field_name("type")
            return made is not None and syntax.text(made).rsplit(".", 1)[-1] in _STRING_TYPES
        if kind == "binary_expression":
            op = node.child_by_field_name("operator")
            return (
                op is not None
                and syntax.text(op) == "+"
                and (
                    self._stringish(node.child_by_field_name("left") or node, depth + 1)
                    if node.child_by_field_name("left") is not node
                    else False
                )
            )
        return False

    def _variable(self, name: Any, kind: Any, decl: Any) -> None:
        if name is None:
            return
        var = syntax.text(name)
        if kind is not None and syntax.text(kind) != "var":
            self.var_types.setdefault(var, set()).add(_type_text(kind))
        value = decl.child_by_field_name("value") if decl is not None else None
        if value is not None:
            self.var_inits.setdefault(var, []).append(value)

    def _classes(self, simple: str) -> set[str]:
        """The qualified names a simple class name may be."""
        if simple in self.imports:
            return {self.imports[simple]}
        if simple in self.own_classes:
            return {f"{self.package}.{simple}" if self.package else simple}
        out = {f"{pkg}.{simple}" for pkg in self.on_demand}
        if simple in _JAVA_LANG:
            out.add(f"java.lang.{simple}")
        if self.fragment and simple in _WELL_KNOWN:
            out.add(_WELL_KNOWN[simple])
        return out

    def _type_names(self, text: str) -> set[str]:
        """The qualified names a type's text may be (its first segment resolved)."""
        head, dot, rest = text.partition(".")
        if dot and head[:1].islower():
            return {text}  # already qualified
        return {c + (dot + rest if dot else "") for c in self._classes(head)}

    # -------------------------------------------------------------------- resolution
    def _resolve(self, node: Any, depth: int = 0) -> frozenset[str]:
        """What an expression may be: ``C:cls`` a class, ``I:cls`` an instance, ``M:member``
        a member (``cls.name`` or ``cls#name``), ``P:pkg`` a package prefix."""
        if node is None:
            return frozenset()
        cached = self.memo.get(node.id)
        if cached is not None:
            return cached
        self._resolve_chain(node, depth)
        cached = self.memo.get(node.id)
        if cached is not None:
            return cached
        if depth > _MAX_DEPTH:
            self.add(UNPARSABLE, node, "expression nested too deep")
            return frozenset()
        out = frozenset(self._resolve_uncached(node, depth + 1))
        self.memo[node.id] = out
        return out

    def _resolve_chain(self, node: Any, depth: int) -> None:
        """Resolve a chain's links innermost first (``a.b().c()...``, a builder's hundred
        calls): each link then finds its object known, and no chain needs deep recursion."""
        links: list[Any] = []
        link = node
        while (
            link is not None
            and link.type in ("method_invocation", "field_access")
            and link.id not in self.memo
        ):
            links.append(link)
            link = link.child_by_field_name("object")
        for inner in reversed(links[1:]):
            self._resolve(inner, depth)

    def _resolve_uncached(self, node: Any, depth: int) -> set[str]:
        kind = node.type
        if kind == "identifier":
            return self._identifier(syntax.text(node), depth)
        if kind == "parenthesized_expression" and node.named_children:
            return set(self._resolve(node.named_children[-1], depth))
        if kind == "cast_expression":
            cast = node.child_by_field_name("type")
            return {f"I:{c}" for c in self._type_names(_type_text(cast))} if cast else set()
        if kind == "object_creation_expression":
            made = node.child_by_field_name("type")
            return {f"I:{c}" for c in self._type_names(_type_text(made))} if made else set()
        if kind == "class_literal":
            return {"I:java.lang.Class"}
        if kind == "ternary_expression":
            out: set[str] = set()
            for field in ("consequence", "alternative"):
                out |= self._resolve(node.child_by_field_name(field), depth)
            return out
        if kind == "field_access":
            obj = node.child_by_field_name("object")
            field = node.child_by_field_name("field")
            if obj is None or field is None:
                return set()
            if obj.type == "this":
                return {t for t in self._identifier(syntax.text(field), depth) if t[0] == "I"}
            return self._members(self._resolve(obj, depth), syntax.text(field))
        if kind == "method_invocation":
            return self._called(node, depth)
        if kind == "this":
            return set()
        return set()

    def _identifier(self, name: str, depth: int) -> set[str]:
        out: set[str] = set()
        if name in self.var_types or name in self.var_inits:
            for kind in self.var_types.get(name, ()):
                out |= {f"I:{c}" for c in self._type_names(kind)}
            if name not in self.resolving:
                self.resolving.add(name)
                for init in self.var_inits.get(name, ()):
                    out |= {s for s in self._resolve(init, depth) if s[0] == "I"}
                self.resolving.discard(name)
            return out
        if name[:1].isupper():
            out |= {f"C:{c}" for c in self._classes(name)}
        elif not out:
            out.add(f"P:{name}")
        for member in self.static_members.get(name, ()):
            out.add(f"M:{member}")
        for owner in self.static_on_demand:
            out.add(f"M:{owner}.{name}")
        return out

    def _members(self, owners: frozenset[str] | set[str], name: str) -> set[str]:
        """``owner.name`` for each thing an expression may be, and what that member is."""
        out: set[str] = set()
        for owner in owners:
            tag, value = owner[0], owner[2:]
            if tag == "C":
                member = f"{value}.{name}"
                out.add(f"M:{member}")
                out.add(f"C:{member}")  # a nested class
            elif tag == "I":
                member = f"{value}#{name}"
                out.add(f"M:{member}")
            elif tag == "P":
                if value.count(".") < _MAX_SEGMENTS:  # package names are short
                    out.add(f"C:{value}.{name}" if name[:1].isupper() else f"P:{value}.{name}")
                continue
            else:
                continue
            returned = _RETURNS.get(member)
            if returned is not None:
                out.add(f"I:{returned}")
        return out

    def _called(self, node: Any, depth: int) -> set[str]:
        """What a method invocation calls (members) and returns (instances)."""
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return set()
        name = syntax.text(name_node)
        obj = node.child_by_field_name("object")
        if obj is not None:
            out = self._members(self._resolve(obj, depth), name)
        else:
            out = {f"M:{m}" for m in self.static_members.get(name, ())}
            out |= {f"M:{owner}.{name}" for owner in self.static_on_demand}
            for member in [m[2:] for m in out]:
                if member in _RETURNS:
                    out.add(f"I:{_RETURNS[member]}")
        if name == "getClass":
            out.add("I:java.lang.Class")
        return out

    # ---------------------------------------------------------------------------- rules
    def _import(self, node: Any) -> None:
        name = next((c for c in node.named_children if "identifier" in c.type), None)
        if name is None:
            return
        qualified = syntax.text(name).replace(" ", "")
        star = any(c.type == "asterisk" for c in node.children)
        self._qualified(qualified + ("." if star else ""), node)
        self._member(qualified, node)

    def _qualified(self, qualified: str, node: Any) -> None:
        """A class or package by its qualified name: the capabilities of its package."""
        for prefix, cap in _TYPES:
            if prefix.endswith("."):
                hit = qualified.startswith(prefix) or qualified + "." == prefix
            else:
                hit = qualified == prefix or qualified.startswith(prefix + ".")
            if hit:
                self.add(cap, node)
        if qualified.rsplit(".", 1)[-1] == "Unsafe":
            self.add(UNSAFE, node)

    def _member(self, member: str, node: Any) -> None:
        cap = _MEMBERS.get(member)
        if cap is not None:
            self.add(cap, node)

    def _judge_all(self, things: frozenset[str] | set[str], node: Any) -> None:
        for thing in things:
            tag, value = thing[0], thing[2:]
            if tag == "M":
                self._member(value, node)
            elif tag == "C":
                self._qualified(value, node)

    def _invocation(self, node: Any) -> None:
        name_node = node.child_by_field_name("name")
        name = syntax.text(name_node) if name_node is not None else ""
        cap = _METHOD_NAMES.get(name)
        if cap is not None:
            self.add(cap, node, _head(node))
        called = self._called(node, 0)
        self._judge_all({t for t in called if t[0] == "M"}, node)
        obj = node.child_by_field_name("object")
        if obj is not None and obj.type == "identifier":
            self._judge_all(self._resolve(obj), obj)
        if "M:java.lang.System.getProperty" in called:
            args = node.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if first is not None and _JAVA_COMMAND in (self._text_of(first) or ""):
                self.add(PROPERTIES, node)

    def _static_name(self, node: Any) -> None:
        """A bare name a static import brings in (``out`` of ``System.*``)."""
        if _member_name(self.up, node):
            return  # a member's own name, judged with its owner
        things = self._identifier(syntax.text(node), 0)
        self._judge_all({t for t in things if t[0] == "M"}, node)

    def _escaping_runtime(self, node: Any) -> None:
        """The Runtime handed where its type is lost (an argument, a collection, a return
        value, an Object): whatever then calls ``exit``/``halt``/``exec`` on it is unseen."""
        parent = self.up.parent(node)
        if parent is None or "I:java.lang.Runtime" not in self._resolve(node):
            return
        kind = parent.type
        lost = kind in (
            "argument_list",
            "array_initializer",
            "return_statement",
            "lambda_expression",
        )
        if kind == "variable_declarator" and parent.child_by_field_name("value") == node:
            holder = self.up.parent(parent)
            declared = holder.child_by_field_name("type") if holder is not None else None
            lost = _type_text(declared) not in ("Runtime", "java.lang.Runtime", "var")
        if kind == "assignment_expression" and parent.child_by_field_name("right") == node:
            left = parent.child_by_field_name("left")
            types = self.var_types.get(syntax.text(left), set()) if left is not None else set()
            lost = not types & {"Runtime", "java.lang.Runtime"}
        if lost:
            self.add(EXIT, node)
            self.add(PROCESSES, node)

    def _field_access(self, node: Any) -> None:
        things = self._resolve(node)
        self._judge_all(things, node)

    def _reference(self, node: Any) -> None:
        """``X::m``: the member ``m`` of what ``X`` is (a class's ``m`` as a static member
        and, unbound, as an instance method)."""
        children = node.named_children
        if len(children) < 2:
            return
        target, name = children[0], syntax.text(children[-1])
        owners = set(self._resolve(target))
        if target.type in ("type_identifier", "scoped_type_identifier", "generic_type"):
            owners |= {f"C:{c}" for c in self._type_names(_type_text(target))}
        owners |= {f"I:{o[2:]}" for o in owners if o[0] == "C"}
        members = self._members(owners, name)
        self._judge_all(members, node)
        if "I:java.lang.Runtime" in members:  # Runtime::getRuntime as a Supplier
            self.add(EXIT, node)
            self.add(PROCESSES, node)
        cap = _METHOD_NAMES.get(name)
        if cap is not None:
            self.add(cap, node)

    def _creation(self, node: Any) -> None:
        made = node.child_by_field_name("type")
        if made is None:
            return
        names = self._type_names(_type_text(made))
        simple = _type_text(made).rsplit(".", 1)[-1]
        args = node.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        if simple in ("PrintStream", "PrintWriter") and first is not None:
            # A stream on a file name or a File opens a file for writing.
            opened = self._resolve(first)
            if first.type == "string_literal" or any(
                t in ("I:java.io.File", "I:java.nio.file.Path") for t in opened
            ):
                self.add(FILE_WRITES, node)
        for name in names:
            self._qualified(name, node)

    def _type_mention(self, node: Any) -> None:
        parent = self.up.parent(node)
        if parent is not None and parent.type == "scoped_type_identifier":
            return  # judged with the whole name
        for name in self._type_names(_type_text(node)):
            self._qualified(name, node)

    def _static_field(self, node: Any) -> None:
        """A static field's initialiser runs when the class loads (an interface's fields are
        static): a call there, unless it only builds a value, is load-time code."""
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        static = modifiers is not None and any(c.type == "static" for c in modifiers.children)
        in_interface = getattr(self.up.parent(node), "type", "") == "interface_body"
        if not (static or in_interface):
            return
        for decl in node.children_by_field_name("declarator"):
            value = decl.child_by_field_name("value")
            if value is None:
                continue
            stack = [value]
            while stack:
                call = stack.pop()
                if call.type in ("lambda_expression", "class_body", "method_reference"):
                    continue  # code that runs later, when called
                if call.type == "method_invocation" and not _PURE_INITS.match(_callee(call)):
                    self.add(STATIC_FIELD_INIT, call, _head(call))
                stack.extend(call.children)

    def _method(self, node: Any) -> None:
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        if modifiers is not None and any(c.type == "native" for c in modifiers.children):
            self.add(NATIVE, node, _head(node))
        name = node.child_by_field_name("name")
        if name is not None and syntax.text(name) in ("premain", "agentmain"):
            self.add(INSTRUMENTATION, node, _head(node))

    # -------------------------------------------------------------------------- strings
    def _strings(self) -> None:
        """Fold every string expression bottom-up and judge the outermost ones."""
        for decl in syntax.walk(self.root):
            if decl.type == "variable_declarator":
                value = decl.child_by_field_name("value")
                name = decl.child_by_field_name("name")
                if value is not None and name is not None and value.type in _LITERALS:
                    self.constants[syntax.text(name)] = _literal(value)
        for node in postorder(self.root):
            value = self._fold(node)
            if value is not None:
                self.values[node.id] = value
        for node in syntax.walk(self.root):
            text = self._text_of(node)
            if not text or node.type == "identifier":
                continue
            parent = self.up.parent(node)
            if parent is not None and self._text_of(parent) is not None:
                continue
            if _RUNNER_TEXT.search(text):
                self.add(RUNNER_TEXT, node)
            if _FRAMEWORK_TEXT.search(text):
                self.add(FRAMEWORK, node)
            if _JAVA_COMMAND in text:
                self.add(PROPERTIES, node)
            for cap in text_capabilities(text):
                self.add(cap, node)

    def _text_of(self, node: Any) -> str | None:
        value = self.values.get(node.id)
        if isinstance(value, _Str):
            return str(value)
        return self.partial.get(node.id)

    def _fold(self, node: Any) -> Any:
        """A node's constant value: _Str for a string, _Char, int, or a list (an array)."""
        kind = node.type
        if kind in _LITERALS:
            return _literal(node)
        if kind == "identifier":
            if _member_name(self.up, node):
                return None
            return self.constants.get(syntax.text(node))
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return self.values.get(node.named_children[0].id)
        if kind == "binary_expression":
            return self._concat(node)
        if kind == "cast_expression":
            target = node.child_by_field_name("type")
            operand = node.child_by_field_name("value")
            number = _number(self.values.get(operand.id)) if operand is not None else None
            if target is not None and number is not None:
                if syntax.text(target) == "char":
                    return _Char(number)
                if syntax.text(target) in ("int", "long", "short", "byte"):
                    return number
            return None
        if kind == "array_creation_expression" or kind == "array_initializer":
            init = node if kind == "array_initializer" else node.child_by_field_name("value")
            if init is None:
                return None
            items = [self.values.get(c.id) for c in init.named_children]
            return items if all(i is not None for i in items) else None
        if kind == "method_invocation":
            return self._fold_call(node)
        if kind == "object_creation_expression":
            return self._fold_new(node)
        return None

    def _concat(self, node: Any) -> Any:
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or left is None or right is None or syntax.text(op) != "+":
            return None
        a, b = self.values.get(left.id), self.values.get(right.id)
        if isinstance(a, _Str) or isinstance(b, _Str):
            if a is not None and b is not None:
                return _Str((_show(a) + _show(b))[:_MAX_TEXT])
        elif a is not None and b is not None:
            x, y = _number(a), _number(b)
            return x + y if x is not None and y is not None else None
        parts = [
            self.partial.get(n.id, _show(v) if isinstance(v, _Str) else "")
            for n, v in ((left, a), (right, b))
        ]
        if any(parts):
            self.partial[node.id] = "".join(parts)[:_MAX_TEXT]
        return None

    def _fold_call(self, node: Any) -> Any:
        name_node = node.child_by_field_name("name")
        obj = node.child_by_field_name("object")
        args_node = node.child_by_field_name("arguments")
        if name_node is None or args_node is None:
            return None
        name = syntax.text(name_node)
        args = [self.values.get(a.id) for a in args_node.named_children]
        receiver = self.values.get(obj.id) if obj is not None else None
        owner = syntax.text(obj).rsplit(".", 1)[-1] if obj is not None else ""
        if receiver is not None:
            return _string_method(receiver, name, args)
        if owner == "String" and name in ("valueOf", "copyValueOf"):
            return _Str(_show(args[0])) if len(args) == 1 and args[0] is not None else None
        if owner == "Character" and name == "toString" and len(args) == 1:
            number = _number(args[0])
            return _Str(chr(number)) if number is not None and 0 <= number < 0x110000 else None
        if owner == "String" and name == "join" and args and isinstance(args[0], _Str):
            rest = args[1][0:] if len(args) == 2 and isinstance(args[1], list) else args[1:]
            if all(isinstance(r, _Str) for r in rest):
                return _Str(str(args[0]).join(str(r) for r in rest)[:_MAX_TEXT])
            return None
        if owner == "String" and name == "format" and args and isinstance(args[0], _Str):
            return _format(str(args[0]), args[1:])
        if (owner, name) in (("Paths", "get"), ("Path", "of")) or name == "resolve":
            # Path pieces joined: judged as one path (the unknown pieces left out).
            pieces = [_show(a) for a in args if a is not None]
            if obj is not None and name == "resolve":
                base = self._text_of(obj)
                pieces = [base, *pieces] if base else pieces
            if pieces:
                self.partial[node.id] = "/".join(pieces)[:_MAX_TEXT]
        return None

    def _fold_new(self, node: Any) -> Any:
        made = node.child_by_field_name("type")
        args_node = node.child_by_field_name("arguments")
        if made is None or args_node is None:
            return None
        simple = _type_text(made).rsplit(".", 1)[-1]
        args = [self.values.get(a.id) for a in args_node.named_children]
        if simple in ("StringBuilder", "StringBuffer"):
            if not args:
                return _Str("")
            return _Str(str(args[0])) if isinstance(args[0], _Str) else None
        if simple == "String" and args and isinstance(args[0], list):
            numbers = [_number(x) for x in args[0]]
            if all(n is not None and 0 <= n < 0x110000 for n in numbers):
                return _Str("".join(chr(n or 0) for n in numbers))
        if simple == "File":
            pieces = [_show(a) for a in args if a is not None]
            if pieces:
                self.partial[node.id] = "/".join(pieces)[:_MAX_TEXT]
        return None


class _Str(str):
    """A folded Java String (apart from a char, which adds as a number)."""


class _Char(int):
    """A folded Java char."""


def _show(value: Any) -> str:
    """A constant as string concatenation shows it."""
    if isinstance(value, _Char):
        return chr(value) if 0 <= value < 0x110000 else ""
    if isinstance(value, list):
        return "".join(_show(v) for v in value)
    return str(value)


def _number(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    return None


_CHANGES: dict[str, Callable[[str], str]] = {
    "toString": str,
    "intern": str,
    "strip": str.strip,
    "trim": str.strip,
    "toUpperCase": str.upper,
    "toLowerCase": str.lower,
}


def _string_method(receiver: Any, name: str, args: list[Any]) -> Any:
    """``"a".concat("b")``, ``sb.append(x)``, ``s.toUpperCase()`` ... of constants."""
    if not isinstance(receiver, _Str):
        return None
    text = str(receiver)
    change = _CHANGES.get(name)
    if change is not None:
        return _Str(change(text))
    if name in ("concat", "append") and len(args) == 1 and args[0] is not None:
        return _Str((text + _show(args[0]))[:_MAX_TEXT])
    if name == "repeat" and len(args) == 1 and _number(args[0]) is not None:
        count = max(0, min(_number(args[0]) or 0, _MAX_TEXT // max(1, len(text)) + 1))
        return _Str((text * count)[:_MAX_TEXT])
    if name == "replace" and len(args) == 2 and all(a is not None for a in args):
        return _Str(text.replace(_show(args[0]), _show(args[1]))[:_MAX_TEXT])
    return None


def _format(template: str, args: list[Any]) -> _Str | None:
    """``String.format`` of constants for the verbs that print a value as it is."""
    out: list[str] = []
    rest = iter(args)
    i = 0
    while i < len(template):
        ch = template[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        verb = template[i + 1 : i + 2]
        i += 2
        if verb == "%":
            out.append("%")
        elif verb == "n":
            out.append("\n")
        elif verb in ("s", "d", "c"):
            value = next(rest, None)
            if value is None:
                return None
            out.append(_show(_Char(value) if verb == "c" and _number(value) is not None else value))
        else:
            return None
    return _Str("".join(out)[:_MAX_TEXT])


def _literal(node: Any) -> Any:
    raw = syntax.text(node)
    kind = node.type
    if kind == "string_literal":
        if raw.startswith('"""'):
            body = raw[3:-3]
            body = body.split("\n", 1)[1] if "\n" in body else body
            return _Str(decode_escapes("\n".join(ln.strip() for ln in body.split("\n"))))
        return _Str(decode_escapes(raw[1:-1]))
    if kind == "character_literal":
        body = decode_escapes(raw[1:-1])
        return _Char(ord(body)) if len(body) == 1 else None
    digits = raw.replace("_", "").rstrip("lL")
    try:
        if kind == "octal_integer_literal":
            return int(digits, 8)
        return int(digits, 0)
    except ValueError:
        return None


def _type_text(node: Any) -> str:
    """A type's name without type arguments, annotations or array dimensions."""
    if node is None:
        return ""
    if node.type == "generic_type" and node.named_children:
        node = node.named_children[0]
    if node.type == "catch_type" and node.named_children:
        node = node.named_children[0]
    text = re.sub(r"<.*", "", syntax.text(node)).replace(" ", "")
    text = re.sub(r"@\w+(\([^)]*\))?", "", text)
    return text.split("[", 1)[0]


def _callee(call: Any) -> str:
    """``Owner.name`` of a method invocation (its object's text and its name)."""
    obj = call.child_by_field_name("object")
    name = call.child_by_field_name("name")
    head = re.sub(r"\s+", "", syntax.text(obj)) + "." if obj is not None else ""
    head = re.sub(r"<[^>]*>", "", head)
    head = re.sub(r"^(?:[a-z_]\w*\.)+(?=[A-Z])", "", head)  # the package of a qualified name
    return head + (syntax.text(name) if name is not None else "")


def _member_name(up: Parents, node: Any) -> bool:
    """Is an identifier the name of a field or method after a dot (not a variable)?"""
    parent = up.parent(node)
    return (
        parent is not None
        and parent.type in ("field_access", "method_invocation")
        and parent.child_by_field_name("object") != node
    )


def _head(node: Any) -> str:
    return syntax.text(node).split("\n", 1)[0]
