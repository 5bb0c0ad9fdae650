"""Which sensitive capabilities a piece of Python source uses, read from its syntax tree alone.

A candidate patch runs in the same interpreter as the tests, so it could forge their outcome by
reaching frames, code objects, pytest's internals, the garbage collector, ctypes and the like.
The verifier refuses a patch that *introduces* such a capability (one that neither the base code
nor the reference fix uses); this module only answers "which capabilities does this source
use?", with evidence. The policy (set differences) lives in ``swe_forge/verify/capabilities.py``.

The input is hostile, so the scan:

- never imports or runs it: ``ast.parse`` and a walk over the tree, nothing else;
- reads a file as Python does: its bytes go to the compiler, which honours the BOM and the
  encoding declaration exactly as an import would (a file declaring UTF-7 shows the code hidden
  in its "comments"); declaring any codec but UTF-8, ASCII or Latin-1 is a capability in itself;
- resolves names the way an obfuscator would hide them: import aliases (``import os as o``,
  ``from os import _exit as e``), plain re-assignments (``g = getattr``, ``s = sys``),
  ``getattr``/``setattr``/``__getattribute__``/``vars(x)[...]``/``x.__dict__[...]`` with names
  folded from constant strings (``"_get" + "frame"``, ``"".join([...])``, f-strings, slices,
  ``chr``), and dynamic imports of constant module names;
- matches some attribute names on any object (``.f_back`` is a frame whatever holds it), and
  string constants exactly equal to such a name (that is how a name is smuggled into a lookup);
- walks the tree with an explicit stack (no recursion), and turns parser failures on absurd
  input into an ``error`` instead of a crash.

Standalone on purpose: it runs inside task images (Python 3.8 to 3.13, started with ``-I -S``)
and on the host, so stdlib only, Python 3.8 syntax, no annotations, no ``ast.unparse``.

CLI: ``python swe_forge_capabilities.py ROOT [PATH ...]`` prints ``{path: scan(...)}`` as JSON.
"""

import ast
import builtins
import codecs
import json
import os
import re
import stat
import sys
import warnings

# ---------------------------------------------------------------------------------------------
# The catalog: a policy written as data. Matching code is below and knows no capability by name
# except where a rule needs the shape of the code (class bodies, comparison dunders, ...).
# ---------------------------------------------------------------------------------------------

CAPABILITIES = {
    "builtin_subclass_comparison": "a subclass of a builtin value type that redefines "
    "comparison or truth (a value that equals anything)",
    "builtins_access": "the builtins module or __builtins__ (rebinding what every test calls)",
    "class_mutation": "assignment to __class__, __bases__, __dict__ or __mro__",
    "code_objects": "function internals: code objects, __globals__, __closure__, defaults",
    "constant_comparison": "a comparison or truth dunder that returns a constant",
    "dynamic_access": "attribute access or imports by computed name; writes to globals(); "
    "module namespaces and class trees walked; names spelled through codecs",
    "dynamic_class": "classes built at run time: 3-argument type(), types.new_class",
    "dynamic_code": "exec, eval, compile, unpickling, runpy, interactive interpreters, "
    "modules loaded from a path",
    "fd_manipulation": "raw file descriptors: os.dup/dup2/fdopen/write/close, open(fd), "
    "fcntl()/ioctl(), pty",
    "filesystem_listing": "directory listing: os.walk/listdir/scandir, glob, Path.iterdir",
    "frame_introspection": "stack frames and tracebacks: sys._getframe, inspect.stack, .f_back, "
    "__traceback__",
    "framework_access": "the test framework itself: pytest, _pytest, pluggy, unittest, ...",
    "gc_access": "the garbage collector's view of live objects",
    "harness_reference": "a string or an import naming swe-forge (its harness, files or variables)",
    "isinstance_override": "defines __instancecheck__ or __subclasscheck__",
    "module_table": "the import system's tables: sys.modules, sys.meta_path, sys.path, path "
    "hooks, site.addsitedir",
    "native_code": "native code and raw memory: ctypes, cffi, _testcapi, mmap",
    "proc_access": "/proc, /dev/fd, /dev/mem or cgroup paths",
    "process_exit": "ending or signalling the process: os._exit, sys.exit, signal handlers, atexit",
    "process_spawn": "starting processes: subprocess, os.system/fork/exec*, multiprocessing",
    "pytest_hooks": "defines or binds pytest hook implementations (pytest_*) or pytest_plugins",
    "sockets": "sockets and socket servers",
    "source_encoding": "a source encoding declaration other than UTF-8, ASCII or Latin-1 "
    "(a codec can rewrite the code)",
    "source_reading": "reading source code: inspect.getsource, linecache, loader.get_source",
    "test_files_access": "names test files or pytest's state: tests/, conftest, sys.argv",
    "threads": "starting threads (at import time, they outlive the code that started them)",
    "tracing": "trace, profile and audit hooks: sys.settrace, sys.monitoring",
}

# Dotted names, after alias resolution. A rule matches the name and everything below it
# ("sys.modules" matches "sys.modules.get"); a trailing "*" matches any last component that
# starts with the stem ("os.exec*" matches "os.execve"). Builtins are written bare ("exec"); a
# reference through the builtins module ("builtins.exec") matches them too.
_DOTTED_RULES = {
    "builtins_access": ("builtins",),
    "code_objects": ("types.CodeType", "types.FunctionType", "types.LambdaType"),
    # Walking a module's namespace reaches what no name in the file says. (__import__ and
    # friends are judged by their argument, see _DYNAMIC_IMPORTERS: a constant module name is
    # an import of that module, a computed one is dynamic_access.)
    "dynamic_access": ("inspect.getmembers", "inspect.getmembers_static"),
    "dynamic_class": ("types.new_class", "__build_class__"),
    "dynamic_code": (
        "exec",
        "eval",
        "compile",
        "marshal.load",
        "marshal.loads",
        "pickle.load",
        "pickle.loads",
        "pickle.Unpickler",
        "pickle._load",
        "pickle._loads",
        "pickle._Unpickler",
        "_pickle.load",
        "_pickle.loads",
        "_pickle.Unpickler",
        "dill",
        "cloudpickle.load",
        "cloudpickle.loads",
        "runpy",
        "code.InteractiveInterpreter",
        "code.InteractiveConsole",
        "code.interact",
        "codeop",
        # Code loaded from a file (one the patch or the tests wrote is never scanned), whatever
        # the arguments.
        "importlib.util.spec_from_file_location",
        "importlib.util.spec_from_loader",
        "importlib.util.module_from_spec",
        "importlib.machinery.SourceFileLoader",
        "importlib.machinery.SourcelessFileLoader",
        "importlib.machinery.ExtensionFileLoader",
        "importlib.machinery.FileFinder",
        "importlib._bootstrap",
        "importlib._bootstrap_external",
        "_imp",
        "imp.load_source",
        "imp.load_compiled",
        "imp.load_dynamic",
        "imp.load_module",
        "imp.load_package",
        "zipimport.zipimporter",
        "pkgutil.get_importer",
        "pkgutil.ImpImporter",
        "pkgutil.ImpLoader",
        "types.ModuleType",  # called or subclassed only, see _CALL_ONLY
    ),
    "fd_manipulation": (
        "os.close",
        "os.closerange",
        "os.dup",
        "os.dup2",
        "os.fdopen",
        "os.write",
        "os.writev",
        "os.pwrite",
        "os.pwritev",
        "os.sendfile",
        "os.splice",
        "os.copy_file_range",
        "io.FileIO",
        "_io.FileIO",
        "os.set_inheritable",
        "os.openpty",
        "os.pipe2",
        "socket.fromfd",
        # File locking (fcntl.flock, fcntl.lockf, LOCK_*) is ordinary; fcntl() and ioctl() are not.
        "fcntl.fcntl",
        "fcntl.ioctl",
        "pty",
    ),
    "filesystem_listing": (
        "os.walk",
        "os.fwalk",
        "os.listdir",
        "os.scandir",
        "glob.glob",
        "glob.iglob",
    ),
    # "py" only counts when imported: it is too common a variable name (see _IMPORT_ONLY).
    "framework_access": (
        "pytest",
        "_pytest",
        "pluggy",
        "py",
        "unittest",
        "doctest",
        "nose",
        "nose2",
    ),
    "frame_introspection": (
        "sys._getframe",
        "sys._getframemodulename",
        "sys._current_frames",
        "inspect.currentframe",
        "inspect.stack",
        "inspect.trace",
        "inspect.getouterframes",
        "inspect.getinnerframes",
        "inspect.getframeinfo",
        "inspect.getargvalues",
        "traceback.extract_stack",
        "traceback.walk_stack",
        "traceback.walk_tb",
        "traceback.format_stack",
        "traceback.print_stack",
        "traceback.StackSummary",
        "logging.currentframe",
    ),
    "gc_access": (
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "gc.garbage",
        "gc.callbacks",
        "gc.is_tracked",
    ),
    "module_table": (
        "sys.modules",
        "sys.meta_path",
        "sys.path",
        "sys.path_hooks",
        "sys.path_importer_cache",
        "site.addsitedir",
        "site.addpackage",
    ),
    # Importing ctypes or cffi is enough; mmap and multiprocessing's shared memory only when a
    # mapping is made (mmap.PAGESIZE and the like are constants).
    "native_code": (
        "ctypes",
        "_ctypes",
        "cffi",
        "_testcapi",
        "_testinternalcapi",
        "mmap.mmap",
        "_posixsubprocess",
        "multiprocessing.shared_memory",
        "multiprocessing.sharedctypes",
        "multiprocessing.heap",
        "multiprocessing.Value",
        "multiprocessing.Array",
        "multiprocessing.RawValue",
        "multiprocessing.RawArray",
    ),
    "process_exit": (
        "os._exit",
        "os.kill",
        "os.killpg",
        "os.abort",
        "sys.exit",
        "exit",  # bare exit()/quit(): only as calls, see _CALL_ONLY
        "quit",
        # signal.Signals, signal.SIGTERM and the like are names; these install handlers, set
        # timers or send signals.
        "signal.signal",
        "signal.setitimer",
        "signal.alarm",
        "signal.pthread_kill",
        "signal.raise_signal",
        "signal.set_wakeup_fd",
        "signal.pthread_sigmask",
        "signal.siginterrupt",
        "signal.pidfd_send_signal",
        "atexit.register",
        "atexit._*",
        # faulthandler.enable() and dump_traceback() only print; these can end the process.
        "faulthandler.dump_traceback_later",
        "faulthandler.register",
        "faulthandler._*",
        "_thread.interrupt_main",
    ),
    # subprocess.CalledProcessError, PIPE, DEVNULL and the like are names; an import alone
    # starts nothing (nor does multiprocessing.cpu_count()).
    "process_spawn": (
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "subprocess._*",
        "os.system",
        "os.popen",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.posix_spawnp",
        "os.spawn*",
        "os.exec*",
        "multiprocessing.Process",
        "multiprocessing.Pool",
        "multiprocessing.Manager",
        "multiprocessing.Pipe",
        "multiprocessing.Queue",
        "multiprocessing.JoinableQueue",
        "multiprocessing.SimpleQueue",
        "multiprocessing.get_context",
        "multiprocessing.set_executable",
        "multiprocessing.set_forkserver_preload",
        "multiprocessing.context",
        "multiprocessing.process",
        "multiprocessing.pool",
        "multiprocessing.managers",
        "multiprocessing.popen_*",
        "multiprocessing.spawn",
        "multiprocessing.forkserver",
        "multiprocessing.resource_tracker",
        "multiprocessing.reduction",
        "multiprocessing.util",
        "pty.spawn",
        "asyncio.create_subprocess_exec",
        "asyncio.create_subprocess_shell",
        "asyncio.subprocess.create_subprocess_exec",
        "asyncio.subprocess.create_subprocess_shell",
        "concurrent.futures.ProcessPoolExecutor",
        "concurrent.futures.process.ProcessPoolExecutor",
    ),
    # socket.gethostname(), getaddrinfo(), AF_INET and the like open nothing.
    "sockets": (
        "socket.socket",
        "socket.socketpair",
        "socket.create_connection",
        "socket.create_server",
        "socket.fromfd",
        "socket.fromshare",
        "socket.SocketType",
        "socket.send_fds",
        "socket.recv_fds",
        "socket.dup",
        "socket._socket",  # the C module (socket._GLOBAL_DEFAULT_TIMEOUT is a constant)
        "_socket",
        "socketserver",
        "multiprocessing.connection",
        "asyncio.open_unix_connection",
        "asyncio.start_unix_server",
        "asyncio.open_connection",
        "asyncio.start_server",
    ),
    "source_reading": (
        "inspect.getsource",
        "inspect.getsourcelines",
        "inspect.getsourcefile",
        "inspect.getfile",
        "inspect.findsource",
        "inspect.getmodule",
        "inspect.getcomments",
        "linecache",
        "tokenize.open",
        "__loader__",
    ),
    "test_files_access": ("sys.argv",),
    "threads": (
        "threading.Thread",
        "threading.Timer",
        "_thread.start_new_thread",
        "_thread.start_new",
        "_thread.start_joinable_thread",
        "threading._start_*",  # threading's private names for the above
        "multiprocessing.dummy",
        "concurrent.futures.ThreadPoolExecutor",
        "concurrent.futures.thread.ThreadPoolExecutor",
    ),
    "tracing": (
        "sys.settrace",
        "sys.setprofile",
        "sys.gettrace",
        "sys.getprofile",
        "sys.addaudithook",
        "sys.call_tracing",
        "sys.monitoring",
        "sys._settraceallthreads",
        "sys._setprofileallthreads",
        "threading.settrace",
        "threading.setprofile",
        "threading.settrace_all_threads",
        "threading.setprofile_all_threads",
    ),
}

# Attribute names that are sensitive on any object: `x.f_back` is a frame whatever `x` is.
_ATTR_RULES = {
    "builtins_access": ("__builtins__",),
    "code_objects": (
        "__code__",
        "__globals__",
        "__closure__",
        "co_code",
        "co_consts",
        "co_names",
        "co_varnames",
        "co_filename",
        "co_firstlineno",
        "co_lnotab",
        "co_linetable",
        "co_exceptiontable",
        "co_qualname",
        "func_code",
        "func_globals",
        "gi_code",
        "cr_code",
        "ag_code",
    ),
    # __subclasses__ walks the class tree down to anything (pytest's Exit, os._wrap_close...).
    "dynamic_access": ("__import__", "__subclasses__"),
    "dynamic_class": ("__build_class__",),
    "dynamic_code": ("exec_module", "load_module"),
    "fd_manipulation": ("dup2",),
    "filesystem_listing": ("iterdir", "rglob", "glob"),
    "framework_access": ("TestReport", "CallInfo", "runtestprotocol"),
    "frame_introspection": (
        "_getframe",
        "f_back",
        "f_locals",
        "f_globals",
        "f_code",
        "f_builtins",
        "f_lasti",
        "f_lineno",
        "f_trace",
        "f_trace_lines",
        "f_trace_opcodes",
        "tb_frame",
        "tb_next",
        "__traceback__",
        "gi_frame",
        "cr_frame",
        "ag_frame",
    ),
    "gc_access": ("get_referrers", "get_referents", "get_objects"),
    "isinstance_override": ("__instancecheck__", "__subclasscheck__"),
    "module_table": ("meta_path", "path_hooks"),
    "native_code": ("pythonapi",),
    "process_exit": ("_exit",),
    "process_spawn": ("subprocess_exec", "subprocess_shell"),
    "source_reading": ("get_source", "__loader__"),
    "tracing": ("settrace", "setprofile", "addaudithook", "f_trace"),
}

# Attribute-name prefixes, sensitive only on an object of the given names: pytest's hooks are
# reached as `config.hook.pytest_*` or `item.ihook.pytest_*` (`cfg.pytest_args` is the
# project's own attribute).
_ATTR_PREFIX_RULES = (("pytest_", frozenset(("hook", "ihook")), "framework_access"),)

# Attribute-only names that a string constant may not equal: nobody writes "f_back" or
# "_getframe" as data except to look the attribute up by name later.
_SMUGGLED_PREFIXES = ("_", "f_", "co_", "tb_", "gi_", "cr_", "ag_")

# Assigning (or setattr/delattr-ing) these attribute names rewires an object or a function.
_ASSIGN_ATTR_RULES = {
    "class_mutation": ("__class__", "__bases__", "__dict__", "__mro__"),
    # A package's search path: like sys.path, it makes an import load code from anywhere.
    "module_table": ("__path__",),
    "code_objects": ("__defaults__", "__kwdefaults__", "__code__"),
}

# Assigning these dotted names replaces a process-wide hook.
_ASSIGN_DOTTED_RULES = {
    "process_exit": ("sys.excepthook", "threading.excepthook", "sys.unraisablehook"),
}

# Builtins resolved by name even when a local binds the same name somewhere in the file: a
# conditional or unreached module-level binding (`if 0: exec = None`) does not shadow the
# builtin, so only an import or a top-level def/class of the name counts as shadowing.
_BUILTIN_NAMES = frozenset(
    (
        "exec",
        "eval",
        "compile",
        "exit",
        "quit",
        "getattr",
        "setattr",
        "hasattr",
        "delattr",
        "vars",
        "globals",
        "locals",
        "type",
        "object",
        "__import__",
        "__build_class__",
        "__builtins__",
        "__loader__",
    )
)

# Rules that count only when the name is called (or, for a class, subclassed): `exit` and
# `quit` are common variable names; `types.ModuleType` is common in annotations and
# isinstance() checks, and only a call makes a module.
_CALL_ONLY = {"exit": "process_exit", "quit": "process_exit", "types.ModuleType": "dynamic_code"}

# Unbound, unimported names are taken literally (a star import or a builtin put them there),
# except these, which are ordinary variable names unless imported.
_IMPORT_ONLY = frozenset(("py",))

# Module spellings that are another module: posix/nt *are* os; __builtins__ is builtins.
_ROOT_ALIASES = {"posix": "os", "nt": "os", "__builtin__": "builtins", "__builtins__": "builtins"}

# getattr and friends: kind ("get", "set", "del") per function.
_GETATTR_FUNCS = {
    "getattr": "get",
    "hasattr": "get",
    "inspect.getattr_static": "get",
    "setattr": "set",
    "delattr": "del",
}
# Dunder accessors, called bound (`x.__getattribute__(n)`) or unbound
# (`object.__getattribute__(x, n)`): kind and the argument count of the bound form.
_DUNDER_ACCESSORS = {
    "__getattribute__": ("get", 1),
    "__getattr__": ("get", 1),
    "__setattr__": ("set", 2),
    "__delattr__": ("del", 1),
}
# operator.attrgetter("a.b") and methodcaller("name"): attribute names as strings.
_NAME_GETTERS = frozenset(("operator.attrgetter", "operator.methodcaller"))

# Functions that import a module named by their first argument (or `name=`). With a constant
# name they count as an import of that module; with a computed one, as dynamic_access.
_DYNAMIC_IMPORTERS = frozenset(
    (
        "__import__",
        "importlib.__import__",
        "importlib.import_module",
        "importlib.reload",
        "importlib.util.spec_from_file_location",
        "importlib.util.spec_from_loader",
        "importlib.util.module_from_spec",
        "imp.load_source",
        "imp.load_module",
        "imp.load_compiled",
        "imp.load_dynamic",
        "imp.load_package",
        "imp.reload",
    )
)

# open() and its twins: given a file descriptor (or closefd=), they write where the process's
# own streams go, without os.write.
_OPENERS = frozenset(("open", "io.open", "_io.open", "codecs.open"))
# Calls whose result, passed to an opener, is a file descriptor (or may be: the environment
# is where a parent process hands one over).
_DESCRIPTOR_SOURCES = frozenset(
    ("int", "os.getenv", "os.getenvb", "os.environ.get", "os.environb.get", "os.environ.pop")
)
_ENVIRONMENTS = frozenset(("os.environ", "os.environb"))
# Name obfuscation that folding does not undo: codecs that transform text (rot13), codecs fed a
# constant (`codecs.decode("5f65786974", "hex")`), bytes built from numbers, reversed strings.
_CODEC_CALLS = frozenset(("codecs.decode", "codecs.encode", "_codecs.decode", "_codecs.encode"))
# Codec lookups (codec name first): only rot13 is flagged, a computed name is ordinary here.
_CODEC_LOOKUPS = frozenset(
    (
        "codecs.lookup",
        "codecs.getdecoder",
        "codecs.getencoder",
        "codecs.getincrementaldecoder",
        "codecs.getincrementalencoder",
        "codecs.getreader",
        "codecs.getwriter",
    )
)
_PLAIN_CODEC_NAMES = frozenset(
    ("utf-8", "utf8", "utf-8-sig", "ascii", "us-ascii", "latin-1", "latin1", "iso-8859-1")
)
_BYTES_FROM_DATA = frozenset(
    (
        "bytes.fromhex",
        "bytearray.fromhex",
        "binascii.unhexlify",
        "binascii.a2b_hex",
        "binascii.a2b_base64",
        "base64.b64decode",
        "base64.b32decode",
        "base64.b16decode",
        "base64.b85decode",
        "base64.a85decode",
        "base64.standard_b64decode",
        "base64.urlsafe_b64decode",
        "base64.decodebytes",
        "zlib.decompress",
    )
)
_OBFUSCATING_ITERABLES = frozenset(("reversed",))
# A module's namespace, iterated, reaches every function in it (`vars(os).items()`): modules
# known as such from their names alone, beyond the ones this file imports.
_KNOWN_SUBMODULES = frozenset(("os.path",))
# Methods that change a list in place (a package's __path__).
_LIST_MUTATORS = frozenset(("append", "insert", "extend", "__setitem__", "__iadd__"))
# Namespace builtins: writing through them creates or replaces names nobody can see statically.
_NAMESPACE_FUNCS = frozenset(("globals", "locals", "vars"))
_NAMESPACE_MUTATORS = frozenset(
    ("update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__")
)

# Builtin value types: a subclass that redefines comparison or truth passes `==` and `assert`.
_BUILTIN_VALUE_TYPES = frozenset(
    (
        "int",
        "float",
        "complex",
        "str",
        "bytes",
        "bytearray",
        "list",
        "tuple",
        "dict",
        "set",
        "frozenset",
        "bool",
        "type",
        "memoryview",
        "range",
        "collections.UserString",
        "collections.UserList",
        "collections.UserDict",
    )
)
_COMPARISON_DUNDERS = frozenset(
    (
        "__eq__",
        "__ne__",
        "__bool__",
        "__len__",
        "__contains__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__instancecheck__",
        "__subclasscheck__",
    )
)
# Dunders whose constant result decides an assertion.
_CONSTANT_DUNDERS = frozenset(
    ("__eq__", "__ne__", "__bool__", "__contains__", "__lt__", "__le__", "__gt__", "__ge__")
)
_ISINSTANCE_DUNDERS = frozenset(("__instancecheck__", "__subclasscheck__"))
# Builtin callables that do not bind as methods: `__eq__ = bool` makes `a == b` mean `bool(b)`.
_TRIVIAL_CALLABLES = frozenset(
    ("bool", "callable", "id", "hash", "len", "repr", "str", "int", "any", "all", "isinstance")
)
_THREAD_BASES = frozenset(("threading.Thread", "Thread"))

# Strings.
_PROC_SUBSTRINGS = ("/proc/", "/dev/fd", "/dev/mem", "/dev/kmem")
_PROC_EXACT = ("/proc",)
_PROC_PREFIXES = ("/sys/fs/cgroup",)
_TEST_SUBSTRINGS = ("conftest", "PYTEST_CURRENT_TEST", "pytest.ini", "tox.ini")
_TEST_DIRS = frozenset(("tests", "test", "testing"))
_TEST_FILE = re.compile(r"test_.*\.py|.*_test\.py|conftest\.py", re.S)
# In module names (imports): `test` and `testing` are too common (numpy.testing, django.test).
_TEST_MODULE = re.compile(r"tests|conftest|test_.*|.*_test", re.S)
_HARNESS_SUBSTRINGS = ("swe_forge", "swe-forge", "sweforge")

# Source encodings (PEP 263). A declaration is a comment naming `coding[:=]` on line 1, or on
# line 2 under a blank or comment-only line 1. Python's compiler splits lines at \r, \n and
# \r\n, tokenize.detect_encoding at \n only: both readings are checked (see _declarations).
_BOM = codecs.BOM_UTF8
_COOKIE = re.compile(rb"[ \t\f]*#[^\n]*?coding[:=][ \t]*([-\w.]+)")
_BLANK_LINE = re.compile(rb"[ \t\f]*(?:[#\r]|$)")
_LINE_BREAK = re.compile(rb"\r\n?|\n")
# codecs.lookup() names of the encodings an honest file declares.
_PLAIN_CODECS = frozenset(("utf-8", "ascii", "iso8859-1"))

# Limits that keep hostile input cheap: folding depth and folded length, names per alias.
_FOLD_DEPTH = 40
_FOLD_MAX = 4096
_INT_MAX = 2**63
_INT_OPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitXor: lambda a, b: a ^ b,
}
_RESOLVE_DEPTH = 30
_ALIAS_MAX = 8
_EVIDENCE_MAX = 5


def _invert(rules):
    index = {}
    for cap, names in rules.items():
        for name in names:
            index.setdefault(name, set()).add(cap)
    return index


_DOTTED_INDEX = {}
_MATCH_CACHE = {}  # dotted name -> _match(dotted name)
_STAR_INDEX = {}  # parent -> [(stem, cap)]
for _cap, _names in _DOTTED_RULES.items():
    for _name in _names:
        if _name.endswith("*"):
            _parent, _, _stem = _name[:-1].rpartition(".")
            _STAR_INDEX.setdefault(_parent, []).append((_stem, _cap))
        else:
            _DOTTED_INDEX.setdefault(_name, set()).add(_cap)
_ATTR_INDEX = _invert(_ATTR_RULES)
_ASSIGN_ATTR_INDEX = _invert(_ASSIGN_ATTR_RULES)
_ASSIGN_DOTTED_INDEX = _invert(_ASSIGN_DOTTED_RULES)
_SMUGGLED = {
    name: caps for name, caps in _ATTR_INDEX.items() if name.startswith(_SMUGGLED_PREFIXES)
}
_PYTHON_BUILTINS = frozenset(dir(builtins))
# Top-level modules the catalog names: `vars(shutil.os)` is the namespace of os.
_MODULE_ROOTS = frozenset(
    name.split(".")[0] for names in _DOTTED_RULES.values() for name in names
) - (_PYTHON_BUILTINS | _BUILTIN_NAMES | _IMPORT_ONLY)

_HARNESS = re.compile("|".join(re.escape(s) for s in _HARNESS_SUBSTRINGS), re.I)
_PROC = re.compile("|".join(re.escape(s) for s in _PROC_SUBSTRINGS))
_ATTR_IN_TEXT = re.compile(r"[.{\[]\s*([A-Za-z_][A-Za-z0-9_]*)")
_SIMPLE_FORMAT = re.compile(r"(?:[^%]|%s|%%)*", re.S)
_DOTTED_DETAIL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_SCOPES = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
# Fields that never hold a node worth visiting: names, flags, operators and Load/Store markers
# (skipping them halves the nodes a walk touches).
_SKIP_FIELDS = frozenset(
    [
        "ctx",
        "op",
        "ops",
        "id",
        "attr",
        "name",
        "arg",
        "asname",
        "module",
        "level",
        "kind",
        "type_comment",
        "conversion",
        "is_async",
        "rest",
    ]
)
_FIELDS = {}  # node type -> fields that may hold nodes
# Node types that bind names or may alias something (the rest is skipped by the first pass).
_BINDERS = frozenset(
    getattr(ast, name)
    for name in (
        "Import",
        "ImportFrom",
        "arg",
        "FunctionDef",
        "AsyncFunctionDef",
        "ClassDef",
        "ExceptHandler",
        "Assign",
        "AnnAssign",
        "NamedExpr",
        "MatchAs",
        "MatchStar",
        "MatchMapping",
    )
    if hasattr(ast, name)  # match statements exist from Python 3.10
)
_FOLDABLE = frozenset((ast.BinOp, ast.JoinedStr, ast.Call, ast.Subscript))
_LEAVES = frozenset((ast.Constant, ast.Name, ast.Import, ast.ImportFrom))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEFS = (*_FUNCTIONS, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Nodes whose `name` (or `rest`) string binds a name: except handlers and match patterns.
_NAME_BINDERS = frozenset(
    getattr(ast, name)
    for name in ("ExceptHandler", "MatchAs", "MatchStar", "MatchMapping")
    if hasattr(ast, name)
)


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


def _norm(dotted):
    root, dot, rest = dotted.partition(".")
    return _ROOT_ALIASES.get(root, root) + dot + rest


def _bare(dotted):
    """`builtins.exec` -> `exec`: builtins are matched by their bare name."""
    return dotted[len("builtins.") :] if dotted.startswith("builtins.") else dotted


def _match(dotted):
    """Capabilities whose dotted rules match `dotted` (normalized) or its bare builtin form."""
    caps = _MATCH_CACHE.get(dotted)
    if caps is not None:
        return caps
    caps = set()
    for name in {dotted, _bare(dotted)}:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            caps.update(_DOTTED_INDEX.get(".".join(parts[:i]), ()))
            for stem, cap in _STAR_INDEX.get(".".join(parts[: i - 1]), ()):
                if i > 1 and parts[i - 1].startswith(stem):
                    caps.add(cap)
    caps = frozenset(caps)
    if len(_MATCH_CACHE) < 65536:  # bounded: the names come from hostile input
        _MATCH_CACHE[dotted] = caps
    return caps


def _last_name(node):
    """`hook` for `config.hook` or `hook`; None for any other expression."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _slice_of(node):
    # Python 3.8 wraps a plain subscript in ast.Index; later versions do not.
    sl = node.slice
    if type(sl).__name__ == "Index":
        sl = sl.value
    return sl


def _int_const(node):
    if node is None:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _int_const(node.operand)
        return None if value is None else -value
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _int_fold(node, depth=0):
    """The int (or bool) `node` always evaluates to, through + - * // % | & ^ and unary
    operators on constants, or None. Bounded: operands beyond 2**63 are not folded."""
    if node is None or depth > _FOLD_DEPTH:
        return None
    depth += 1
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, int) and abs(value) <= _INT_MAX else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
        value = _int_fold(node.operand, depth)
        if value is None:
            return None
        return {ast.USub: -value, ast.UAdd: +value, ast.Invert: ~value}[type(node.op)]
    if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPS:
        left = _int_fold(node.left, depth)
        right = _int_fold(node.right, depth) if left is not None else None
        if right is None:
            return None
        try:
            value = _INT_OPS[type(node.op)](left, right)
        except ZeroDivisionError:
            return None
        return value if abs(value) <= _INT_MAX else None
    return None


def _constant_data(node):
    """A str or bytes constant, or a string expression that folds to one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, bytes))
    return _fold(node) is not None


def _codec_key(name):
    """A codec name folded for comparison: "ROT_13" and "rot-13" are "rot13"."""
    if name is None:
        return None
    key = name.lower().replace("_", "-").replace(" ", "-")
    return "rot13" if key == "rot-13" else key


def _fits(text):
    return text if text is not None and len(text) <= _FOLD_MAX else None


def _fold(node, depth=0):
    """The string `node` always evaluates to, or None when it is not a foldable constant.

    Covers the ways a name gets spelled to dodge a text search: literals, `+`, `%s`
    formatting, f-strings of constants, `"".join([...])`, slicing (`"emarf"[::-1]`), `chr(95)`,
    case changes, `.replace`, `b"...".decode()`. Depth and length are capped: the input is
    hostile and this runs on every candidate expression.
    """
    if depth > _FOLD_DEPTH:
        return None
    depth += 1
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            left = _fold(node.left, depth)
            right = _fold(node.right, depth) if left is not None else None
            return None if right is None else _fits(left + right)
        if isinstance(node.op, ast.Mod):
            # Only %s and %%: a width like "%999999999s" would make the scanner allocate.
            fmt = _fold(node.left, depth)
            if fmt is None or not _SIMPLE_FORMAT.fullmatch(fmt):
                return None
            items = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            values = [_fold(item, depth) for item in items]
            if any(v is None for v in values):
                return None
            try:
                return _fits(fmt % tuple(values))
            except (TypeError, ValueError):
                return None
        return None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if value.format_spec is not None or value.conversion not in (-1, ord("s")):
                    return None
                value = value.value
            text = _fold(value, depth)
            if text is None:
                return None
            parts.append(text)
        return _fits("".join(parts))
    if isinstance(node, ast.Subscript):
        text = _fold(node.value, depth)
        if text is None:
            return None
        sl = _slice_of(node)
        try:
            if isinstance(sl, ast.Slice):
                bounds = [_int_const(b) for b in (sl.lower, sl.upper, sl.step)]
                given = (sl.lower, sl.upper, sl.step)
                if any(b is None and g is not None for b, g in zip(bounds, given)):  # noqa: B905 (strict= is 3.10+)
                    return None
                return text[bounds[0] : bounds[1] : bounds[2]]
            index = _int_const(sl)
            return None if index is None else text[index]
        except (IndexError, ValueError):
            return None
    if isinstance(node, ast.Call) and not node.keywords:
        return _fold_call(node, depth)
    return None


def _fold_call(node, depth):
    func, args = node.func, node.args
    if isinstance(func, ast.Name):
        if func.id == "chr" and len(args) == 1:
            code = _int_const(args[0])
            return chr(code) if code is not None and 0 <= code < 0x110000 else None
        if func.id == "str" and len(args) == 1:
            return _fold(args[0], depth)
        return None
    if not isinstance(func, ast.Attribute):
        return None
    if (
        func.attr == "decode"
        and isinstance(func.value, ast.Constant)
        and isinstance(func.value.value, bytes)
    ):
        codec = _fold(args[0], depth) if args else "utf-8"
        if len(args) > 1 or codec not in ("ascii", "utf-8", "utf8", "latin-1", "latin1"):
            return None
        try:
            return _fits(func.value.value.decode(codec))
        except UnicodeDecodeError:
            return None
    base = _fold(func.value, depth)
    if base is None:
        return None
    if func.attr == "join" and len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
        items = [_fold(item, depth) for item in args[0].elts]
        return None if any(i is None for i in items) else _fits(base.join(items))
    if func.attr in ("lower", "upper", "casefold", "strip", "lstrip", "rstrip") and not args:
        return getattr(base, func.attr)()
    if func.attr == "replace" and len(args) == 2:
        old, new = _fold(args[0], depth), _fold(args[1], depth)
        if old is None or new is None or len(base) * (len(new) + 1) > _FOLD_MAX:
            return None
        return base.replace(old, new)
    return None


def _const_bool(node):
    """The truth of an expression with a fixed, non-None value (`True`, `1`, `not 0`,
    `bool(0)`), else None. A loop, not recursion: `not not ... 1` may be deep."""
    negate = False
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        negate = not negate
        if isinstance(node.operand, ast.Constant) and node.operand.value is None:
            return negate  # `not None` is True
        node = node.operand
    if isinstance(node, ast.Constant):
        if node.value is None:
            return None
        truth = bool(node.value)
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "bool"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
    ):
        truth = bool(node.args[0].value)
    else:
        return None
    return truth != negate


def _const_truth(node):
    """True when `node` is an expression with a fixed, non-None value (`True`, `1`, `not 0`)."""
    return _const_bool(node) is not None


def _child_nodes(node, skip=None):
    """ast.iter_child_nodes, without the fields in _SKIP_FIELDS (nor `skip`)."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        fields = tuple(f for f in type(node)._fields if f not in _SKIP_FIELDS)
        _FIELDS[type(node)] = fields
    out = []
    for field in fields:
        if field == skip:
            continue
        value = getattr(node, field, None)
        if isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def _flatten(tree):
    """Every node worth visiting, with its context, in source order; and the ids of the Name
    nodes that stand for a function's local (see _local_names).

    An explicit stack, no recursion: hostile nesting must not exhaust the stack. Records are
    (node, line, in_function, scope, called, docstring, folded): `scope` is the innermost of
    "module"/"class"/"function", `called` marks a call's function, `docstring` a string
    statement, `folded` the string a constant expression folds to (its pieces are then not
    visited: the whole says more).
    """
    records = []
    local_ids = set()
    # `shadow` is the chain of enclosing scopes' local names, (names, outer) or None: linked,
    # not merged, so that many scopes in a function with many locals stay linear.
    stack = [(tree, 1, False, "module", False, False, None)]

    def push(children, line, in_func, scope, shadow, called=False):
        for child in reversed(children):
            if (
                type(child) is ast.Expr
                and type(child.value) is ast.Constant
                and type(child.value.value) is str
            ):
                stack.append((child.value, line, in_func, scope, False, True, shadow))
            else:
                stack.append((child, line, in_func, scope, called, False, shadow))

    while stack:
        node, line, in_func, scope, called, doc, shadow = stack.pop()
        kind = type(node)
        line = getattr(node, "lineno", None) or line
        folded = _fold(node) if kind in _FOLDABLE else None
        records.append((node, line, in_func, scope, called, doc, folded))
        if kind is ast.Name and _in_chain(shadow, node.id):
            local_ids.add(id(node))
        if folded is not None or kind in _LEAVES:
            continue
        if kind is ast.Call:
            push(node.args + node.keywords, line, in_func, scope, shadow)
            push([node.func], line, in_func, scope, shadow, True)
        elif kind in _SCOPES:
            # Decorators, bases, defaults and annotations run where the def is; the body runs
            # later (a function's), or at once in a namespace of its own (a class's). A class
            # body's own bindings shadow nothing for certain (they may not have run yet); a
            # function's locals shadow the builtins in its body and in the functions it holds.
            if kind is ast.ClassDef:
                push(node.body, line, in_func, "class", shadow)
            else:
                inner = _chain(shadow, _local_names(node))
                body = [node.body] if kind is ast.Lambda else node.body
                push(body, line, True, "function", inner)
            push(_child_nodes(node, skip="body"), line, in_func, scope, shadow)
        elif kind in _COMPREHENSIONS:
            # Its targets are its own locals, everywhere in it but the first iterable (which
            # is evaluated outside: `[x for exec in exec(s)]` calls the builtin).
            targets = set()
            for gen in node.generators:
                targets.update(n.id for n in _target_names(gen.target))
            inner = _chain(shadow, targets)
            first, rest = node.generators[0], node.generators[1:]
            for gen in reversed(rest):
                push([gen.target, gen.iter, *gen.ifs], line, in_func, scope, inner)
            push([first.target, *first.ifs], line, in_func, scope, inner)
            push([first.iter], line, in_func, scope, shadow)
            push(_child_nodes(node, skip="generators"), line, in_func, scope, inner)
        else:
            push(_child_nodes(node), line, in_func, scope, shadow)
    return records, local_ids


def _chain(outer, names):
    return (frozenset(names), outer) if names else outer


def _in_chain(chain, name):
    while chain is not None:
        names, chain = chain
        if name in names:
            return True
    return False


def _target_names(target):
    """The Name nodes an assignment target binds, through tuples, lists and starred items."""
    out = []
    stack = [target]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            out.append(node)
        elif isinstance(node, (ast.Tuple, ast.List)):
            stack.extend(node.elts)
        elif isinstance(node, ast.Starred):
            stack.append(node.value)
    return out


def _local_names(func):
    """The names local to a function or lambda: its parameters and every name its own body
    binds (assignment, for, with, import, def, class, except, del, match, walrus), less those
    declared global or nonlocal.

    Python decides this when it compiles the function: a local never falls back to the
    builtins, even where it is unassigned (`if 0: exec = None` inside a function makes
    `exec(s)` raise UnboundLocalError). Comprehension targets belong to the comprehension;
    nested functions and classes contribute their names only.
    """
    args = func.args
    params = list(getattr(args, "posonlyargs", [])) + list(args.args) + list(args.kwonlyargs)
    names = {a.arg for a in params}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    declared = set()
    comp_targets = set()  # ids of Name nodes bound by a comprehension, not by the function
    stack = [func.body] if isinstance(func, ast.Lambda) else list(func.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load and id(node) not in comp_targets:
                names.add(node.id)
            continue
        if kind in (ast.Global, ast.Nonlocal):
            declared.update(node.names)
            continue
        if kind in _SCOPES:
            if kind is not ast.Lambda:
                names.add(node.name)
            stack.extend(_child_nodes(node, skip="body"))  # decorators, defaults, bases
            continue
        if kind in (ast.Import, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    names.add(alias.asname or alias.name.split(".")[0])
            continue
        if kind is ast.comprehension:
            comp_targets.update(id(n) for n in _target_names(node.target))
        name = getattr(node, "name", None)  # except ... as name; match captures
        if isinstance(name, str) and kind in _NAME_BINDERS:
            names.add(name)
        rest = getattr(node, "rest", None)  # match {**rest}
        if isinstance(rest, str) and kind in _NAME_BINDERS:
            names.add(rest)
        stack.extend(_child_nodes(node))
    return frozenset(names - declared)


def _own_nodes(func):
    """Nodes of a function's body, without descending into nested functions or classes."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        if type(node) not in _SCOPES:
            stack.extend(_child_nodes(node))


def _returns_constant(func):
    """Every `return` of the function returns a fixed value of the same truth (and there is
    at least one). `return True` on one path and `return False` on another is a data-dependent
    answer (`__bool__` of a lazy iterator), not a constant one."""
    truths = set()
    for node in _own_nodes(func):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, ast.Return):
            truth = _const_bool(node.value) if node.value is not None else None
            if truth is None:
                return False
            truths.add(truth)
    return len(truths) == 1


def _class_body_names(body):
    """Names a class body defines (defs and assignments, through if/try/with blocks)."""
    names = {}
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _DEFS):
            names.setdefault(node.name, node.lineno)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.setdefault(node.id, node.lineno)
        if not isinstance(node, ast.Lambda):
            stack.extend(_child_nodes(node))
    return names


def _is_test_path(text):
    """Whether a string names test files or pytest's state.

    Whole path components only: "tests/", "../tests", "a/test/b", "test_x.py", "x_test.py",
    "conftest.py" count; "latest/", "contest.py", and a bare "test" or "tests" do not. Each
    whitespace-separated word is judged alone ("see tests/" counts, "the test suite" does not).
    """
    words = text.split()
    if any(s in text for s in _TEST_SUBSTRINGS):
        return True
    for word in words:
        parts = [p.split("::")[0].lower() for p in re.split(r"[/\\]", word)]
        if len(parts) > 1 and any(p in _TEST_DIRS for p in parts):
            return True
        if any(_TEST_FILE.fullmatch(p) for p in parts):
            return True
    return False


def _is_test_module(name):
    return any(_TEST_MODULE.fullmatch(p) for p in name.lower().split("."))


def _is_harness(text):
    return _HARNESS.search(text) is not None


def _is_proc(text):
    return _PROC.search(text) is not None or text in _PROC_EXACT or text.startswith(_PROC_PREFIXES)


def _head(source):
    """The first two lines of `source` (str or bytes) as bytes, without a BOM."""
    if isinstance(source, str):
        head = "\n".join(source.split("\n", 2)[:2]).encode("utf-8", "replace")
    else:
        head = b"\n".join(source.split(b"\n", 2)[:2])
    # A BOM in bytes, or decoded into a str ("\ufeff").
    return head[len(_BOM) :] if head.startswith(_BOM) else head


def _declaration(lines):
    """(line, name) of the encoding declared in the first two `lines`, else None."""
    for number, line in enumerate(lines[:2], 1):
        match = _COOKIE.match(line)
        if match:
            return number, match.group(1).decode("ascii")
        if not _BLANK_LINE.match(line):
            return None
    return None


def _compiler_declaration(source):
    """The declaration Python's compiler honours (lines end at \r, \n or \r\n): the one an
    import or pytest's assertion rewriter decodes the file with."""
    return _declaration(_LINE_BREAK.split(_head(source), 2))


def _declarations(source):
    """[(line, name)]: the encoding declarations of `source` (str or bytes), sorted.

    Read as Python's compiler reads them (see _compiler_declaration) and as
    tokenize.detect_encoding does (lines end at \n only): the two differ on a lone \r, and
    neither reading may hide a declaration the other honours.
    """
    head = _head(source)
    readings = (_LINE_BREAK.split(head, 2), head.split(b"\n", 2))
    return sorted({d for d in map(_declaration, readings) if d is not None})


def _normal_encoding(name):
    """The codec Python's tokenizer uses for a declared name (its get_normal_name)."""
    head = name[:12].lower().replace("_", "-")
    if head == "utf-8" or head.startswith("utf-8-"):
        return "utf-8"
    latin = ("latin-1", "iso-8859-1", "iso-latin-1")
    if head in latin or head.startswith(tuple(n + "-" for n in latin)):
        return "iso-8859-1"
    return name


def _codec_name(name):
    """codecs.lookup()'s name for a declared encoding, or None when there is no such codec."""
    try:
        return codecs.lookup(_normal_encoding(name)).name
    except (LookupError, ValueError, TypeError):
        return None


def _show(text):
    text = text if len(text) <= 60 else text[:57] + "..."
    return "string " + repr(text)


def _prune(details):
    """The details of one capability on one line, without those another says more precisely.

    `ctypes` beside `ctypes.CDLL`, `.settrace` beside `threading.settrace`, `string '_exit'`
    beside `os._exit`: the same use, found by two rules. Linear in the details' total length
    (a hostile line may hold thousands).
    """
    prefixes = set()  # every detail cut before a ".", " " or "("
    members = set()  # non-first components of dotted details
    attrs = set()  # names of attribute-only details (".f_back")
    for detail in details:
        for i, char in enumerate(detail):
            if char in ". (" and i:
                prefixes.add(detail[:i])
        if detail.startswith("string "):
            continue
        head = detail.split(" ")[0]
        if head.startswith("."):
            attrs.add(head[1:])
        elif _DOTTED_DETAIL.fullmatch(head):
            members.update(head.split(".")[1:])
    kept = []
    for detail in sorted(details):
        if detail in prefixes:
            continue
        if detail.startswith(".") and detail[1:] in members:
            continue
        if detail.startswith("string "):
            name = detail[len("string ") :].strip("'\"")
            if name in members or name in attrs:
                continue
        kept.append(detail)
    return kept


# ---------------------------------------------------------------------------------------------
# The scanner
# ---------------------------------------------------------------------------------------------


class _Scanner:
    """One pass to learn the file's names (imports, aliases, bindings), one to find uses."""

    def __init__(self, tree):
        self.tree = tree
        self.aliases = {}  # name -> [dotted]: imports and assignments of resolvable values
        self.attr_aliases = {}  # attribute name -> [dotted]: `self.s = sys`
        self.bound = set()  # names bound other than by an absolute import
        self.shadowed = set()  # builtin names a top-level def/class/import/assignment replaces
        self.local = set()  # ids of Name nodes that stand for a function's local
        self.star = []  # modules imported with `from m import *`
        self.modules = set()  # dotted names of the modules this file imports, and their parents
        self.builtin_subclasses = set()  # classes in this file with a builtin value base
        self.hits = {}  # cap -> {(line, detail)}
        self.cache = {}  # id(node) -> resolve(node)

    # -- pass 1: names ------------------------------------------------------------------------

    def _alias(self, table, name, dotted):
        values = table.setdefault(name, [])
        if dotted not in values and len(values) < _ALIAS_MAX:
            values.append(dotted)
            return True
        return False

    def learn(self, nodes):
        """Learn imports, aliases and bindings from every node of the file."""
        assignments = []  # (table, name, value node)
        classes = []
        for stmt in self.tree.body:
            if isinstance(stmt, _DEFS):
                self.shadowed.add(stmt.name)
        first_load = {}  # builtin name -> position of its first load, anywhere
        deleted = set()  # names some `del` removes (the builtin shows through again)
        calls = []  # possible dynamic imports (what they import is known once aliases are)
        for node in nodes:
            kind = type(node)
            if kind is ast.Call:
                calls.append(node)
                continue
            if kind is ast.Name:
                ctx = type(node.ctx)
                if ctx is not ast.Load:
                    self.bound.add(node.id)
                    if ctx is ast.Del:
                        deleted.add(node.id)
                elif node.id in _BUILTIN_NAMES:
                    where = (node.lineno, node.col_offset)
                    first_load[node.id] = min(first_load.get(node.id, where), where)
                continue
            if kind not in _BINDERS:
                continue
            if kind is ast.Import:
                for alias in node.names:
                    self._module(_norm(alias.name))
                    if alias.asname:
                        self._alias(self.aliases, alias.asname, _norm(alias.name))
                    else:
                        top = alias.name.split(".")[0]
                        self._alias(self.aliases, top, _norm(top))
                    self.shadowed.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                if node.module and not node.level:
                    self._module(_norm(node.module))
                for alias in node.names:
                    if node.level or not node.module:
                        # Relative imports name the project's own modules: nothing special.
                        if alias.name != "*":
                            self.bound.add(alias.asname or alias.name)
                    elif alias.name == "*":
                        self.star.append(_norm(node.module))
                    else:
                        local = alias.asname or alias.name
                        self._alias(self.aliases, local, self._from_import(node, alias))
                        self.shadowed.add(local)
            elif isinstance(node, ast.arg):
                self.bound.add(node.arg)
            elif (
                isinstance(node, _DEFS)
                or (isinstance(node, ast.ExceptHandler) and node.name)
                or (type(node).__name__ in ("MatchAs", "MatchStar") and node.name)
            ):
                self.bound.add(node.name)
            elif type(node).__name__ == "MatchMapping" and node.rest:
                self.bound.add(node.rest)
            # Assignments that may alias a module, a function or a builtin.
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    assignments.extend(self._pairs(target, node.value))
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                assignments.extend(self._pairs(node.target, node.value))
            elif isinstance(node, _FUNCTIONS):
                # Defaults alias their parameters: `def f(s=sys): s._getframe()`.
                args = node.args
                positional = list(getattr(args, "posonlyargs", [])) + list(args.args)
                defaulted = positional[len(positional) - len(args.defaults) :]
                # zip(strict=) is Python 3.10+; this module runs on 3.8 (B905 silenced).
                for arg, default in zip(defaulted, args.defaults):  # noqa: B905
                    assignments.append((self.aliases, arg.arg, default))
                for arg, default in zip(args.kwonlyargs, args.kw_defaults):  # noqa: B905
                    if default is not None:
                        assignments.append((self.aliases, arg.arg, default))
            elif isinstance(node, ast.ClassDef):
                classes.append(node)
                for stmt in node.body:
                    if isinstance(stmt, ast.Assign):
                        for target in stmt.targets:
                            if isinstance(target, ast.Name):
                                assignments.append((self.attr_aliases, target.id, stmt.value))
        # Aliases of aliases (`a = sys; b = a`): iterate to a fixed point, a few rounds at most.
        for _ in range(5):
            changed = False
            self.cache = {}  # resolutions change as aliases are learnt
            for table, name, value in assignments:
                for dotted in self.resolve(value):
                    changed = self._alias(table, name, dotted) or changed
            if not changed:
                break
        self.cache = {}
        for cls in classes:
            if self._builtin_base(cls) is not None:
                self.builtin_subclasses.add(cls.name)
        self._module_rebindings(first_load, deleted)
        for call in calls:
            imported = self._imported_module(call, self.callee(call.func))
            if imported:
                self._module(imported[0])

    def _module(self, dotted):
        """Note an imported module (and its parents: `import a.b` binds `a`)."""
        parts = dotted.split(".")
        for i in range(1, len(parts) + 1):
            self.modules.add(".".join(parts[:i]))

    def _module_rebindings(self, first_load, deleted):
        """Builtin names an unconditional module-level assignment replaces for the module.

        Only when the assignment comes before every use of the name (code textually after a
        top-level statement runs, or is defined, after it), nothing deletes the name again and
        no star import may bring the builtin back. A conditional binding (`if 0: exec = None`)
        shadows nothing: the builtin shows through where it did not run.
        """
        if self.star:
            return
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign):
                targets = stmt.targets
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets = [stmt.target]
            else:
                continue
            end = (getattr(stmt, "end_lineno", None), getattr(stmt, "end_col_offset", None))
            if None in end:
                continue
            for target in targets:
                for name in _target_names(target):
                    n = name.id
                    if n in _BUILTIN_NAMES and n not in deleted and first_load.get(n, end) >= end:
                        self.shadowed.add(n)

    def _from_import(self, node, alias):
        """What `from module import name` binds: `from builtins import exec` is the builtin."""
        module = _norm(node.module)
        if module == "builtins":
            return _norm(alias.name)
        return _norm(node.module + "." + alias.name)

    def _pairs(self, target, value):
        if isinstance(target, ast.Name):
            return [(self.aliases, target.id, value)]
        if isinstance(target, ast.Attribute):
            return [(self.attr_aliases, target.attr, value)]
        if (
            isinstance(target, (ast.Tuple, ast.List))
            and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts)
        ):
            out = []
            for t, v in zip(target.elts, value.elts):  # noqa: B905 (strict= is 3.10+)
                out.extend(self._pairs(t, v))
            return out
        return []

    # -- name resolution ----------------------------------------------------------------------

    def resolve_name(self, name):
        """Dotted names a bare name may stand for (normalized), or [] for a local value."""
        if name in self.aliases:
            return self.aliases[name]
        if name in _BUILTIN_NAMES:
            return [] if name in self.shadowed else [_norm(name)]
        if name in self.bound or name in _IMPORT_ONLY:
            return []
        # Unbound and unimported: a star import or the builtins put it there.
        out = [_norm(name)]
        if name not in _PYTHON_BUILTINS:
            out.extend(module + "." + name for module in self.star[: _ALIAS_MAX - 1])
        return out[:_ALIAS_MAX]

    def resolve(self, node, depth=0):
        """Dotted names an expression may evaluate to: `o._exit` -> ["os._exit"]."""
        # Memoized per node: the checks below resolve the same subexpressions several times,
        # and without a memo a chain like f()()()... would cost exponential time.
        key = id(node)
        if key not in self.cache:
            self.cache[key] = self._resolve(node, depth) if depth <= _RESOLVE_DEPTH else []
        return self.cache[key]

    def _resolve(self, node, depth):
        depth += 1
        if isinstance(node, ast.Name):
            if id(node) in self.local:
                # A function's local is never the builtin nor a star import's name; it may
                # still alias something (`s = sys` in the function, `def f(s=sys)`).
                return self.aliases.get(node.id, [])
            return self.resolve_name(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value, depth)
            if base:
                return [d + "." + node.attr for d in base]
            return list(self.attr_aliases.get(node.attr, ()))
        if isinstance(node, ast.Call):
            names = self.callee(node.func, depth)
            access = self._attribute_call(node, names)
            if access is not None:
                kind, label, target, name_node, _value = access
                name = _fold(name_node) if name_node is not None else None
                if name is None or target is None or kind != "get" or label == "hasattr":
                    return []  # hasattr() is a bool, setattr() and delattr() are None
                return [d + "." + name for d in self.resolve(target, depth)][:_ALIAS_MAX]
            imported = self._imported_module(node, names)
            return [imported[1]] if imported else []
        if isinstance(node, ast.Subscript):
            key = _fold(_slice_of(node))
            if key is None:
                return []
            owner = self._dict_owner(node.value, depth)
            if owner is not None:
                return [d + "." + key for d in self.resolve(owner, depth)][:_ALIAS_MAX]
            if self._namespace_call(node.value, depth):
                return self.resolve_name(key)
            out = []
            for d in self.resolve(node.value, depth):
                if d == "sys.modules":
                    out.append(_norm(key))
                elif d == "builtins":
                    out.append("builtins." + key)
            return out
        return []

    def callee(self, func, depth=0):
        """Bare dotted names a call's function may be."""
        return {_bare(d) for d in self.resolve(func, depth)}

    def _attribute_call(self, node, names):
        """(kind, label, target, name node, value node) of a getattr-like call, else None.

        `names` is callee(node.func)."""
        args = node.args
        for name in sorted(names):
            kind = _GETATTR_FUNCS.get(name)
            if kind is not None:
                return (
                    kind,
                    name,
                    args[0] if args else None,
                    args[1] if len(args) > 1 else None,
                    args[2] if kind == "set" and len(args) > 2 else None,
                )
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _DUNDER_ACCESSORS:
            kind, bound_arity = _DUNDER_ACCESSORS[func.attr]
            if len(args) > bound_arity:  # object.__getattribute__(x, name)
                target, rest = args[0], args[1:]
            else:  # x.__getattribute__(name)
                target, rest = func.value, args
            return (
                kind,
                func.attr,
                target,
                rest[0] if rest else None,
                rest[1] if kind == "set" and len(rest) > 1 else None,
            )
        return None

    def _imported_module(self, node, names):
        """(module imported, module returned) of a dynamic import with a constant name, else
        None: __import__("a.b") imports a.b and returns a, unless a fromlist asks for a.b."""
        names = names & _DYNAMIC_IMPORTERS
        if not names:
            return None
        arg = node.args[0] if node.args else None
        for kw in node.keywords:
            if kw.arg == "name":
                arg = kw.value
        module = _fold(arg) if arg is not None else None
        if not module or module.startswith("."):
            return None
        module = _norm(module)
        returned = module
        if (
            names <= {"__import__", "importlib.__import__"}
            and len(node.args) < 4
            and not any(kw.arg == "fromlist" for kw in node.keywords)
        ):
            returned = module.split(".")[0]
        return module, returned

    def _importers(self, resolved):
        return any(_bare(d) in _DYNAMIC_IMPORTERS for d in resolved)

    def _namespace_call(self, node, depth=0):
        return isinstance(node, ast.Call) and bool(self.callee(node.func, depth) & _NAMESPACE_FUNCS)

    def _is_module(self, dotted):
        """Whether a resolved name stands for a module: one this file imports (or a parent of
        one, or one it imports with a constant dynamic name), or one named after a module of
        the catalog (`shutil.os`, `vars(m)["os"]`)."""
        if dotted in self.modules or dotted in _KNOWN_SUBMODULES:
            return True
        return dotted.rpartition(".")[2] in _MODULE_ROOTS

    def _descriptor(self, node, depth=0):
        """Whether an opener's file argument is a file descriptor: an int constant (folded),
        int(...), x.fileno(), or one handed over through the environment."""
        if _int_fold(node) is not None:
            return True
        if isinstance(node, ast.Call):
            if self.callee(node.func, depth) & _DESCRIPTOR_SOURCES:
                return True
            return isinstance(node.func, ast.Attribute) and node.func.attr == "fileno"
        if isinstance(node, ast.Subscript):
            return bool(set(self.resolve(node.value, depth)) & _ENVIRONMENTS)
        return False

    def _obfuscated(self, node, names):
        """The label of a call that spells a string through a codec, numbers or reversal, or
        None. `names` is callee(node.func)."""
        lookups = names & _CODEC_LOOKUPS
        if lookups and node.args and _codec_key(_fold(node.args[0])) == "rot13":
            return sorted(lookups)[0] + "() of rot13"
        codec_calls = names & _CODEC_CALLS
        if codec_calls:
            label = sorted(codec_calls)[0]
            codec = node.args[1] if len(node.args) > 1 else None
            for kw in node.keywords:
                if kw.arg == "encoding":
                    codec = kw.value
            if codec is None:  # UTF-8
                data = node.args[0] if node.args else None
                return (
                    label + "() of bytes spelled as data" if self._bytes_from_data(data) else None
                )
            name = _fold(codec)
            if name is None:
                return label + "() with a computed codec"
            name = _codec_key(name)
            if name == "rot13":
                return label + "() with rot13"
            data = node.args[0] if node.args else None
            if name not in _PLAIN_CODEC_NAMES and data is not None and _constant_data(data):
                return label + "() of a constant with " + name
            return None
        func = node.func
        if not isinstance(func, ast.Attribute):
            if "str" in names and len(node.args) > 1 and self._bytes_from_data(node.args[0]):
                return "str() of bytes spelled as data"
            return None
        if func.attr == "decode" and self._bytes_from_data(func.value):
            return "bytes spelled as data, decoded"
        if (
            func.attr == "decode"
            and isinstance(func.value, ast.Constant)
            and isinstance(func.value.value, bytes)
        ):
            # b"\\x5fexit".decode("unicode_escape"); the plain codecs are folded instead.
            codec = node.args[0] if node.args else None
            for kw in node.keywords:
                if kw.arg == "encoding":
                    codec = kw.value
            name = _fold(codec) if codec is not None else "utf-8"
            if name is None or _codec_key(name) not in _PLAIN_CODEC_NAMES:
                return "bytes constant decoded with " + (name or "a computed codec")[:40]
        if func.attr == "translate" and _fold(func.value) is not None:
            return "str constant translated"
        if func.attr == "join" and len(node.args) == 1 and _fold(func.value) is not None:
            arg = node.args[0]
            if isinstance(arg, ast.Call):
                inner = self.callee(arg.func)
                if inner & _OBFUSCATING_ITERABLES:
                    return "str.join() of reversed()"
                if "map" in inner and arg.args and "chr" in self.callee(arg.args[0]):
                    return "str.join() of map(chr, ...)"
            if isinstance(arg, (ast.ListComp, ast.GeneratorExp)):
                elt = arg.elt
                if isinstance(elt, ast.Call) and "chr" in self.callee(elt.func):
                    return "str.join() of chr() items"
        return None

    def _bytes_from_data(self, node):
        """Bytes spelled as data: bytes([...]) or bytearray((...)) of a display (or of a
        comprehension over a constant), bytes.fromhex() or base64/binascii/zlib decoding of a
        constant."""
        if not isinstance(node, ast.Call) or not node.args:
            return False
        names = self.callee(node.func)
        arg = node.args[0]
        if names & _BYTES_FROM_DATA:
            return _constant_data(arg)
        if names & {"bytes", "bytearray"}:
            if isinstance(arg, (ast.List, ast.Tuple)):
                return True
            if isinstance(arg, (ast.ListComp, ast.GeneratorExp)):
                source = arg.generators[0].iter
                return _constant_data(source) or isinstance(source, (ast.List, ast.Tuple))
        return False

    def _own_namespace(self, node):
        """globals(), locals() or vars() without an argument: the running scope's names."""
        return (
            isinstance(node, ast.Call)
            and not node.args
            and not node.keywords
            and bool(self.callee(node.func) & _NAMESPACE_FUNCS)
        )

    def _dict_owner(self, node, depth=0):
        """`x` when `node` is `vars(x)` or `x.__dict__`: a subscript of it is an attribute."""
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return node.value
        if (
            isinstance(node, ast.Call)
            and len(node.args) == 1
            and not isinstance(node.args[0], ast.Starred)
            and "vars" in self.callee(node.func, depth)
        ):
            return node.args[0]
        return None

    def _builtin_base(self, cls):
        for base in cls.bases:
            for d in self.resolve(base):
                if _bare(d) in _BUILTIN_VALUE_TYPES:
                    return _bare(d)
        return None

    # -- pass 2: uses -------------------------------------------------------------------------

    def add(self, cap, line, detail):
        self.hits.setdefault(cap, set()).add((line, detail))

    def ref(self, dotted, line, in_func, called):
        """A use of a dotted name."""
        bare = _bare(dotted)
        for cap in _match(dotted):
            if _CALL_ONLY.get(dotted) == cap and not called:
                continue
            if cap == "threads" and called and not in_func:
                self.add(cap, line, dotted + "() at import")
            else:
                self.add(cap, line, dotted)
        if not called and (
            bare in _GETATTR_FUNCS or bare in _DYNAMIC_IMPORTERS or bare in _NAME_GETTERS
        ):
            # Passed around as a value (`map(getattr, ...)`): its arguments cannot be checked.
            self.add("dynamic_access", line, dotted + " as a value")
        if _is_harness(dotted):
            self.add("harness_reference", line, dotted)

    def attr(self, name, line, store=False, owner=None):
        """A use of an attribute name, on whatever object (`owner`: the last name of that
        object's expression, `hook` in `config.hook.pytest_x`, if it has one)."""
        for cap in _ATTR_INDEX.get(name, ()):
            self.add(cap, line, "." + name)
        for prefix, owners, cap in _ATTR_PREFIX_RULES:
            if name.startswith(prefix) and owner in owners:
                self.add(cap, line, "." + owner + "." + name)
        if store:
            for cap in _ASSIGN_ATTR_INDEX.get(name, ()):
                self.add(cap, line, "." + name + " assigned")
            if name.startswith("pytest_"):
                # A hook bound on a module or plugin object (reading one is not binding it).
                self.add("pytest_hooks", line, "." + name + " assigned")
        if _is_harness(name):
            self.add("harness_reference", line, "." + name)

    def imported(self, module, line, detail):
        """An import (static, or dynamic with a constant name) of `module`."""
        for cap in _match(module):
            if _CALL_ONLY.get(module) != cap:
                self.add(cap, line, detail)
        if _is_test_module(module):
            self.add("test_files_access", line, detail)
        if _is_harness(module):
            self.add("harness_reference", line, detail)

    def string(self, text, line, docstring=False):
        """A string constant (or a folded constant expression).

        A docstring (or any string statement) of more than one word is prose: the path rules
        skip it. A one-word one still counts (`open(f.__doc__)` would make it a path)."""
        shown = _show(text)
        for cap in _SMUGGLED.get(text, ()):
            self.add(cap, line, shown)
        if docstring and len(text.split()) != 1:
            return
        # Attribute paths spelled inside a string: str.format's fields ("{0.tb_frame.f_back}"
        # is an attribute walk when formatted), operator.attrgetter("a.f_globals").
        for m in _ATTR_IN_TEXT.finditer(text):
            for cap in _ATTR_INDEX.get(m.group(1), ()):
                self.add(cap, line, shown)
        if _is_proc(text):
            self.add("proc_access", line, shown)
        if _is_test_path(text):
            self.add("test_files_access", line, shown)
        if _is_harness(text):
            self.add("harness_reference", line, shown)

    def dunder_value(self, name, value, line, owner=None):
        """`name = value` in a class body, `X.name = value`, setattr(X, "name", value)."""
        if name in _ISINSTANCE_DUNDERS:
            self.add("isinstance_override", line, name + " assigned")
        if name in _CONSTANT_DUNDERS and value is not None and self._trivial(value):
            self.add("constant_comparison", line, name + " is constant")
        if name in _COMPARISON_DUNDERS and owner in self.builtin_subclasses:
            self.add("builtin_subclass_comparison", line, owner + "." + name + " assigned")

    def _trivial(self, value):
        if isinstance(value, ast.Lambda):
            return _const_truth(value.body)
        return any(d in _TRIVIAL_CALLABLES or d.startswith("operator.") for d in self.callee(value))

    def namespace_dict(self, node, line):
        """The namespace argument of a 3-argument type(): a class body written as a dict."""
        items = []
        if isinstance(node, ast.Dict):
            # A None key is a `**mapping` entry. zip(strict=) would need Python 3.10.
            pairs = zip(node.keys, node.values)  # noqa: B905
            items = [(_fold(k), v) for k, v in pairs if k is not None]
        elif isinstance(node, ast.Call) and "dict" in self.callee(node.func):
            items = [(kw.arg, kw.value) for kw in node.keywords if kw.arg]
        for key, value in items:
            if key in _COMPARISON_DUNDERS:
                self.add("builtin_subclass_comparison", line, "type() namespace defines " + key)
            if key in _ISINSTANCE_DUNDERS:
                self.add("isinstance_override", line, "type() namespace defines " + key)
            if key in _CONSTANT_DUNDERS and self._trivial(value):
                self.add("constant_comparison", line, key + " is constant")

    def scan(self):
        """Learn the file's names, then record every use; returns the report."""
        records, self.local = _flatten(self.tree)
        self.learn([r[0] for r in records])
        handlers = {
            ast.Constant: self.visit_constant,
            ast.Name: self.visit_name,
            ast.Attribute: self.visit_attribute,
            ast.Call: self.visit_call,
            ast.Subscript: self.visit_subscript,
            ast.Import: self.visit_import,
            ast.ImportFrom: self.visit_import,
            ast.FunctionDef: self.visit_function,
            ast.AsyncFunctionDef: self.visit_function,
            ast.ClassDef: self.visit_class,
            ast.Assign: self.visit_assign,
            ast.AnnAssign: self.visit_assign,
            ast.BinOp: self.visit_binop,
        }
        for node, line, in_func, scope, called, doc, folded in records:
            if folded is not None:
                self.string(folded, line)
                continue
            handler = handlers.get(type(node))
            if handler is not None:
                handler(node, line, in_func, scope, called, doc)
        return self.report()

    # Visitors: one per node type, all with the signature of a record.

    def visit_constant(self, node, line, in_func, scope, called, doc):
        if isinstance(node.value, str):
            self.string(node.value, line, doc)
        elif isinstance(node.value, bytes):
            self.string(node.value.decode("latin-1"), line, doc)

    def visit_binop(self, node, line, in_func, scope, called, doc):
        # A BinOp that folds is a string already; "%c" % (95, ...) spells one out of numbers.
        if isinstance(node.op, ast.Mod):
            fmt = _fold(node.left)
            if fmt is not None and "%c" in fmt:
                self.add("dynamic_access", line, "%c formatting")

    def visit_name(self, node, line, in_func, scope, called, doc):
        if isinstance(node.ctx, ast.Load):
            for d in self.resolve(node):
                self.ref(d, line, in_func, called)
        elif node.id == "__path__" and id(node) not in self.local:
            self.add("module_table", line, "__path__ assigned")
        elif node.id.startswith("pytest_") and id(node) not in self.local:
            # A module or class binding of a hook name: pytest takes any callable there for an
            # implementation (`pytest_runtest_call = f`), def or not. A function's local binds
            # nothing pytest sees.
            self.add("pytest_hooks", line, node.id + " assigned")

    def visit_assign(self, node, line, in_func, scope, called, doc):
        if node.value is None:
            return
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and scope == "class":
                self.dunder_value(target.id, node.value, line)
            elif isinstance(target, ast.Attribute):
                owner = target.value.id if isinstance(target.value, ast.Name) else None
                self.dunder_value(target.attr, node.value, line, owner)

    def visit_attribute(self, node, line, in_func, scope, called, doc):
        store = isinstance(node.ctx, (ast.Store, ast.Del))
        resolved = self.resolve(node)
        if not (called and node.attr == "__import__" and self._importers(resolved)):
            # `importlib.__import__(...)` is judged by its argument in visit_call; on an
            # unknown object `.__import__` stays dynamic_access.
            self.attr(node.attr, line, store, _last_name(node.value))
        for d in resolved:
            self.ref(d, line, in_func, called)
            if store:
                for cap in _ASSIGN_DOTTED_INDEX.get(d, ()):
                    self.add(cap, line, d + " assigned")
        if node.attr in _NAMESPACE_MUTATORS and self._namespace_call(node.value):
            self.add("dynamic_access", line, "globals()/locals()/vars()." + node.attr)
        if node.attr in _LIST_MUTATORS and _last_name(node.value) == "__path__":
            self.add("module_table", line, "__path__." + node.attr)
        if node.attr == "__dict__":
            self.module_namespace(node.value, line, "{}.__dict__")
        if node.attr in ("items", "values") and self._own_namespace(node.value):
            # Iterating the module's own globals reaches every module it imports.
            self.add("dynamic_access", line, "globals()/locals()/vars()." + node.attr)

    def visit_call(self, node, line, in_func, scope, called, doc):
        names = self.callee(node.func)
        access = self._attribute_call(node, names)
        if access is not None:
            self.visit_attribute_call(access, line, in_func)
        if names & _DYNAMIC_IMPORTERS:
            module = self._imported_module(node, names)
            label = sorted(names & _DYNAMIC_IMPORTERS)[0]
            if module:
                self.imported(module[0], line, f"{label}({module[0]!r})")
            else:
                self.add("dynamic_access", line, label + "() of a computed name")
        getters = names & _NAME_GETTERS
        if getters:
            label = sorted(getters)[0]
            texts = [_fold(a) for a in node.args] or [None]
            if any(t is None for t in texts):
                self.add("dynamic_access", line, label + "() of a computed name")
            else:
                for text in texts:
                    parts = text.split(".")
                    if label != "operator.attrgetter":
                        parts = parts[:1]
                    for i, part in enumerate(parts):
                        self.attr(part, line, owner=parts[i - 1] if i else None)
                        if part == "__dict__":
                            # Of what, nobody can tell: a module's namespace, maybe.
                            self.add("dynamic_access", line, label + "('__dict__')")
        if "type" in names and (
            len(node.args) >= 3 or any(isinstance(a, ast.Starred) for a in node.args)
        ):
            self.add("dynamic_class", line, "type() with 3 arguments")
            if len(node.args) >= 3:
                self.namespace_dict(node.args[2], line)
        if names & {"exec", "eval"}:
            arguments = list(node.args[1:]) + [kw.value for kw in node.keywords]
            if any(self._namespace_call(a) for a in arguments):
                self.add("dynamic_access", line, "globals()/locals() passed to exec/eval")
        if "vars" in names and len(node.args) == 1:
            self.module_namespace(node.args[0], line, "vars({})")
        openers = names & _OPENERS
        if openers:
            self.opened(node, line, sorted(openers)[0])
        obfuscated = self._obfuscated(node, names)
        if obfuscated is not None:
            self.add("dynamic_access", line, obfuscated)
        self.namespace_reads(node, line)
        self.namespace_writes(node, line)

    def module_namespace(self, target, line, template):
        """vars(m) or m.__dict__ of a module: iterated, it reaches what no name in the file
        says (`for k, v in vars(os).items()`). `vars(self)` and `obj.__dict__` are fine."""
        if isinstance(target, ast.Starred):
            return
        for d in self.resolve(target):
            if self._is_module(d):
                self.add("dynamic_access", line, template.format(d))
                return

    def opened(self, node, line, label):
        """open() and its twins on a file descriptor, or told not to close it."""
        if any(kw.arg == "closefd" for kw in node.keywords):
            self.add("fd_manipulation", line, label + "(closefd=)")
            return
        first = node.args[0] if node.args else None
        for kw in node.keywords:
            if kw.arg in ("file", "filename"):
                first = kw.value
        if first is not None and self._descriptor(first):
            self.add("fd_manipulation", line, label + "() of a file descriptor")

    def namespace_reads(self, node, line):
        """`globals().get(name)` with a computed name (a constant one is a plain name)."""
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in ("get", "pop", "setdefault")
            and self._own_namespace(func.value)
            and node.args
            and _fold(node.args[0]) is None
        ):
            self.add(
                "dynamic_access",
                line,
                f"globals()/locals()/vars().{func.attr}() of a computed name",
            )

    def namespace_writes(self, node, line):
        """`globals().update(pytest_x=f)`, `vars(m).setdefault("pytest_x", f)` and the like:
        hook names bound through a namespace (computed ones are dynamic_access already)."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in _NAMESPACE_MUTATORS:
            return
        if not (self._namespace_call(func.value) or self._dict_owner(func.value) is not None):
            return
        keys = [kw.arg for kw in node.keywords if kw.arg]
        if func.attr in ("setdefault", "__setitem__") and node.args:
            keys.append(_fold(node.args[0]))
        elif func.attr == "update" and node.args and isinstance(node.args[0], ast.Dict):
            keys.extend(_fold(k) for k in node.args[0].keys if k is not None)
        for key in sorted(k for k in keys if k and k.startswith("pytest_")):
            self.add("pytest_hooks", line, key + " assigned")

    def visit_attribute_call(self, access, line, in_func):
        kind, label, target, name_node, value = access
        name = _fold(name_node) if name_node is not None else None
        if name is None:
            self.add("dynamic_access", line, label + "() of a computed name")
            return
        if label == "hasattr":
            return  # a feature probe (`hasattr(os, "fork")`) uses nothing it names
        store = kind in ("set", "del")
        self.attr(name, line, store, _last_name(target))
        if name == "__dict__" and target is not None:
            self.module_namespace(target, line, "{}.__dict__")
        owner = target.id if isinstance(target, ast.Name) else None
        for d in self.resolve(target) if target is not None else ():
            # getattr(sys, "_getframe") is sys._getframe.
            self.ref(d + "." + name, line, in_func, False)
            if store:
                for cap in _ASSIGN_DOTTED_INDEX.get(d + "." + name, ()):
                    self.add(cap, line, d + "." + name + " assigned")
                if label == "__setattr__" and _bare(d) in _BUILTIN_VALUE_TYPES:
                    self.add("class_mutation", line, "__setattr__ on builtin " + _bare(d))
        if kind == "set":
            self.dunder_value(name, value, line, owner)

    def visit_subscript(self, node, line, in_func, scope, called, doc):
        store = isinstance(node.ctx, (ast.Store, ast.Del))
        if not store and self._own_namespace(node.value) and _fold(_slice_of(node)) is None:
            self.add("dynamic_access", line, "globals()/locals()/vars() item of a computed name")
        if store and _last_name(node.value) == "__path__":
            self.add("module_table", line, "__path__ item assigned")
        if store and self._namespace_call(node.value):
            self.add("dynamic_access", line, "globals()/locals()/vars() item assigned")
            key = _fold(_slice_of(node))
            if key is not None and key.startswith("pytest_"):
                self.add("pytest_hooks", line, key + " assigned")
        owner = self._dict_owner(node.value)
        if owner is not None:
            key = _fold(_slice_of(node))
            if key is None:
                self.add("dynamic_access", line, "__dict__ item of a computed name")
            else:
                self.attr(key, line, store, _last_name(owner))
        for d in self.resolve(node):
            self.ref(d, line, in_func, False)

    def visit_import(self, node, line, in_func, scope, called, doc):
        for alias in node.names:
            # `from m import f as pytest_runtest_call` binds a hook; `import pytest_x` binds
            # a module, which pytest never takes for a hook.
            bound = alias.asname or (None if isinstance(node, ast.Import) else alias.name)
            if bound and bound.startswith("pytest_"):
                self.add("pytest_hooks", line, "import as " + bound)
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.imported(_norm(alias.name), line, "import " + alias.name)
            return
        if node.level or not node.module:
            # Relative: the project's own modules, unless named after the harness.
            module = "." * (node.level or 0) + (node.module or "")
            for alias in node.names:
                if _is_harness(module + " " + alias.name):
                    self.add("harness_reference", line, f"from {module} import {alias.name}")
            return
        for alias in node.names:
            detail = f"from {node.module} import {alias.name}"
            if alias.name == "*":
                self.imported(_norm(node.module), line, detail)
            else:
                self.imported(self._from_import(node, alias), line, detail)

    def visit_function(self, node, line, in_func, scope, called, doc):
        name = node.name
        if name.startswith("pytest_"):
            self.add("pytest_hooks", line, "def " + name)
        if name in _ISINSTANCE_DUNDERS:
            self.add("isinstance_override", line, "def " + name)
        if name in _CONSTANT_DUNDERS and _returns_constant(node):
            self.add("constant_comparison", line, f"def {name} returns a constant")

    def visit_class(self, node, line, in_func, scope, called, doc):
        if node.name.startswith("pytest_"):
            self.add("pytest_hooks", line, "class " + node.name)
        base = self._builtin_base(node)
        if base is not None:
            defined = _class_body_names(node.body)
            for name in sorted(set(defined) & _COMPARISON_DUNDERS):
                self.add(
                    "builtin_subclass_comparison",
                    defined[name],
                    f"class {node.name}({base}) defines {name}",
                )
        for b in node.bases:
            bases = {_bare(d) for d in self.resolve(b)}
            if bases & _THREAD_BASES:
                self.add("threads", line, f"class {node.name} subclasses Thread")
            for d in sorted(bases & set(_CALL_ONLY)):
                # A subclass is called instead (`class M(types.ModuleType)`, then `M(name)`).
                self.add(_CALL_ONLY[d], line, f"class {node.name} subclasses {d}")

    def report(self):
        caps = {}
        for cap in sorted(self.hits):
            by_line = {}
            for line, detail in self.hits[cap]:
                by_line.setdefault(line, set()).add(detail)
            kept = []
            for line in sorted(by_line):
                details = by_line[line]
                kept.extend([line, d] for d in _prune(details))
                if len(kept) >= _EVIDENCE_MAX:
                    break
            caps[cap] = kept[:_EVIDENCE_MAX]
        return caps


# ---------------------------------------------------------------------------------------------
# Public interface
# ---------------------------------------------------------------------------------------------


def _error(exc):
    name = type(exc).__name__
    if isinstance(exc, SyntaxError):
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"{name}: {exc.msg}{where}"
    message = str(exc)
    return (f"{name}: {message}" if message else name)[:300]


_PARSE_ERRORS = (SyntaxError, ValueError, TypeError, RecursionError, MemoryError, OverflowError)


def _parse(source, path):
    with warnings.catch_warnings():
        # Invalid escapes and the like warn at parse time; under -W error they would raise.
        warnings.simplefilter("ignore")
        return ast.parse(source, filename=path)


def _encoding_evidence(source):
    """[[line, detail]] of the declarations of an encoding other than UTF-8, ASCII or Latin-1."""
    evidence = []
    for line, name in _declarations(source):
        if _codec_name(name) not in _PLAIN_CODECS:
            evidence.append([line, "coding: " + name])
    return evidence


def _lenient_text(data):
    """(text, error) for bytes Python's compiler refused.

    Undecodable bytes (Python cannot import the file: nothing in it runs) are replaced, and
    the text is returned to be scanned for what it shows. (None, "") when the bytes decode (the
    parse error is the source's own, or Python refuses the declaration itself); (None, error)
    when this interpreter has no such codec: one registered at run time (a .pth file, an
    import) could decode the file into anything, and what cannot be read cannot be allowed.
    """
    declared = _compiler_declaration(data)
    name = declared[1] if declared else "utf-8"
    if data.startswith(_BOM):
        data, name = data[len(_BOM) :], "utf-8"
    codec = _codec_name(name)
    if codec is None:
        return None, "LookupError: unknown encoding: " + name[:100]
    try:
        data.decode(codec)
        return None, ""
    except UnicodeError:
        pass
    except Exception:  # a codec that is no text encoding (rot13): Python refuses it too
        return None, ""
    try:
        return data.decode(codec, "replace"), ""
    except Exception:
        return None, ""


def scan(source, path="<string>"):
    """The capabilities `source` (str, or bytes honouring an encoding declaration) uses.

    Returns ``{"caps": {cap: [[line, detail], ...]}, "error": ""}``: only the capabilities
    found, each with at most five pieces of evidence, the first by line, sorted by (line,
    detail). When the source cannot be parsed (or the scan cannot finish), ``caps`` holds at
    most ``source_encoding`` and ``error`` says why, starting with the exception's name
    ("SyntaxError: ... (line 3)"). Never imports or runs `source`.

    Bytes are parsed by Python's own compiler, which decodes them exactly as an import does
    (BOM, encoding declaration); bytes it cannot decode are read leniently (see _lenient_text).
    A str is parsed as it is (Python ignores the declaration of a str), but the declaration
    still counts as ``source_encoding``.
    """
    if isinstance(source, (bytearray, memoryview)):
        source = bytes(source)
    found = {}
    try:
        evidence = _encoding_evidence(source)
    except Exception:  # never expected; a scanner bug must not hide the rest of the file
        evidence = [[1, "coding: unreadable declaration"]]
    if evidence:
        found["source_encoding"] = evidence[:_EVIDENCE_MAX]
    text = source
    if isinstance(text, str) and text.startswith("\ufeff"):
        text = text[1:]  # a BOM decoded into the text is not valid Python
    try:
        tree = _parse(text, path)
    except _PARSE_ERRORS as exc:
        error = _error(exc)
        if not isinstance(source, bytes):
            return {"caps": found, "error": error}
        try:
            text, problem = _lenient_text(source)
        except (RecursionError, MemoryError) as exc2:
            text, problem = None, _error(exc2)
        if problem or text is None:
            return {"caps": found, "error": problem or error}
        try:
            tree = _parse(text, path)
        except _PARSE_ERRORS:
            return {"caps": found, "error": error}
    try:
        caps = _Scanner(tree).scan()
    except (RecursionError, MemoryError) as exc:
        return {"caps": found, "error": _error(exc)}
    except Exception as exc:  # a scanner bug must not crash the harness: report it instead
        return {"caps": found, "error": "InternalError: " + _error(exc)}
    caps.update(found)
    return {"caps": {cap: caps[cap] for cap in sorted(caps)}, "error": ""}


def scan_file(path):
    """scan() of the bytes of the file at `path`: decoded as Python decodes them (see scan).

    A missing file uses nothing (``caps`` and ``error`` empty: a deleted file runs no code);
    anything else that cannot be read, or is not a regular file (a FIFO or /dev/zero behind a
    symlink would never finish reading), is an error.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return {"caps": {}, "error": "OSError: not a regular file"}
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return {"caps": {}, "error": ""}
    except OSError as exc:
        return {"caps": {}, "error": _error(exc)}
    return scan(data, path)


def _all_python_files(root):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in filenames:
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                found.append(rel.replace(os.sep, "/"))
    return sorted(found)


def _scan_group(root, paths):
    if not paths:
        paths = _all_python_files(root)
    out = {}
    for rel in paths:
        if rel.endswith(".py"):
            out[rel] = scan_file(os.path.join(root, rel))
    return out


def main(argv=None):
    """CLI: ``swe_forge_capabilities.py ROOT [PATH ...]`` prints ``{path: scan result}`` as
    JSON for each PATH (relative to ROOT) that ends in ``.py``; without PATHs, for every
    ``*.py`` under ROOT (``.git`` skipped), sorted.

    ``ROOT PATH ... --- ROOT2 PATH ...`` scans each group in the same process (one start-up
    for a patch's pre- and post-images) and prints a JSON list of the groups' results."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args:
        sys.stderr.write("usage: swe_forge_capabilities.py ROOT [PATH ...] [--- ROOT PATH ...]\n")
        raise SystemExit(2)
    groups = [[]]
    for arg in args:
        if arg == "---":
            groups.append([])
        else:
            groups[-1].append(arg)
    if any(not g for g in groups):
        sys.stderr.write("usage: every group needs a ROOT\n")
        raise SystemExit(2)
    results = [_scan_group(g[0], g[1:]) for g in groups]
    out = results[0] if len(groups) == 1 else results
    sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    main()
