"""Assertion canaries: copies of held-out tests that a correct implementation must fail.

When a candidate patch is graded, its code runs in the same interpreter as the held-out tests. A
cheating patch can return "universal" objects (``__eq__``, ``__contains__``, ``__lt__`` always
say yes) or patch ``pytest.raises``/``pytest.approx``, and then every assertion passes with the
bug still there. For each assertion *site* of a fail-to-pass test this module writes a copy of
the test function in which only that one assertion is perturbed so that an honest value fails
it: ``assert f(x) == 3`` becomes ``assert f(x) == <sentinel>`` (a fresh object equal to nothing),
``pytest.raises(E)`` expects a fresh exception class that nothing raises. The grader marks the
copies xfail(strict): an honest implementation fails them (xfailed), a universal object passes
them (XPASS, detected). Copies that the reference implementation does not fail are found by
calibration and dropped, so a useless copy is harmless; a copy that broke the module's import or
changed other tests would not be, which is what most of the care below is about. For the same
reason a copy does not stop at its perturbed site: the failure is noted there and raised when
the test body ends, so the test's own clean-up after the assertion (resetting a class attribute,
say) still runs and leaves nothing behind for the tests after it.

The generated text is appended to the test module (the original bytes are kept, so line numbers
do not move) and only defines things: helper objects and the copies, methods being attached to
their classes. Each definition sits in ``try``/``except Exception`` so that a decorator that
cannot be evaluated again at the end of the module costs that copy only, never the import.
Generated identifiers carry the caller's random token and nothing that names their purpose, and
no comment is generated: the code under test can read the test file.

Standalone on purpose: stdlib only, no imports from swe-forge, importable on old Pythons (no
annotations); it makes canaries on Python 3.9+ only (it needs ``ast.unparse``). It never
executes test code.
"""

import __future__

import ast
import copy
import math
import pickle
import random
import re
import sys
import warnings

_TOKEN = re.compile(r"[a-z0-9]+\Z")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

# Literal node types of Pythons before 3.8 (they parse literals into these, not Constant); only
# looked up there because newer Pythons warn on access.
_OLD_LITERALS = (
    tuple(
        getattr(ast, n)
        for n in ("Num", "Str", "Bytes", "NameConstant", "Ellipsis")
        if hasattr(ast, n)
    )
    if sys.version_info < (3, 8)
    else ()
)

# unittest methods that assert `first` equals `second`: the ones whose expected side a wrong
# value of the same type fails. (assertNotEqual, assertGreater and the like hold for many wrong
# values too, so they are no sites.)
_EQUALITY = frozenset(
    [
        "assertEqual",
        "assertEquals",
        "failUnlessEqual",
        "assertListEqual",
        "assertTupleEqual",
        "assertDictEqual",
        "assertSetEqual",
        "assertSequenceEqual",
        "assertMultiLineEqual",
        "assertCountEqual",
        "assertAlmostEqual",
        "assertAlmostEquals",
    ]
)
# Keyword spellings of the two compared arguments across those methods.
_FIRST = ("first", "list1", "tuple1", "d1", "set1", "seq1", "a")
_SECOND = ("second", "list2", "tuple2", "d2", "set2", "seq2", "b")
# Exception/warning expectations on `self` (unittest) and as plain calls (pytest), with the
# helper that replaces what they expect.
_SELF_EXPECTS = {
    "assertRaises": "E",
    "assertRaisesRegex": "E",
    "assertRaisesRegexp": "E",
    "failUnlessRaises": "E",
    "assertWarns": "W",
    "assertWarnsRegex": "W",
}
_EXPECTS = {"raises": "E", "warns": "W"}
_EXPECTED_KW = ("expected_exception", "expected_warning")
# An expectation of one of these is not perturbed: the real exception would then escape the test,
# and pytest ends the whole session on KeyboardInterrupt and on its own Exit.
_UNSAFE = frozenset(["KeyboardInterrupt", "BaseException", "Exit", "exit"])


def find_sites(source, targets):
    """Perturbable assertion sites of the target tests in a test module's source.

    targets: test names within this file, as "func" or "Class::func" (parametrization ids
    already stripped). Returns a list of site dicts in deterministic order (by target in the
    order given, then by source position): {"test": "Class::func" or "func", "site": k,
    "line": lineno, "kind": "compare"|"call_equal"|"raises"|"in"|"approx"|"guard"} where k counts
    perturbable sites within that test function from 0 in source order. Targets that are not
    found (or in nested classes) have no sites; unparsable source has none.
    """
    tree = _parse(source)
    if not isinstance(tree, ast.Module):
        return []
    found = []
    for test in _targets(targets):
        target = _locate(tree, test)
        if isinstance(target, str):
            continue
        for k, (kind, line) in enumerate(target["sites"]):
            found.append({"test": test, "site": k, "line": line, "kind": kind})
    return found


def make_canaries(source, targets, token, sites=None, limit=40, seeds=2):
    """Calibration copies for the target tests of a test module, to append to that module.

    Each copy is the test under a new name with one assertion site perturbed exactly as
    :func:`decoy_source` perturbs it in place for the same seed; a run with the reference fix
    tells which perturbations it fails (those a verification may use as decoys).

    Returns (code, specs, reason).
    code: text to append to the module ("" if nothing), starting with "\\n\\n".
    specs: [{"test": ..., "site": k, "seed": n, "name": copy's function name, "kind": ...}]
    for every copy made.
    reason: "" or why nothing/fewer was made (e.g. "python<3.9", "syntax error", "no sites").
    sites: None -> all sites (round-robin across targets so each target gets sites before any
    target gets a second one, until `limit`), ``seeds`` perturbations of each while under the
    limit; or an explicit list of (test, k) or (test, k, seed) entries to make (those not
    found are skipped silently; `limit` does not apply).
    token: a short [a-z0-9] string chosen by the caller (random per run); every generated name
    includes it so names never collide with the module's names. Raises ValueError otherwise.

    A copy of site k of ``func`` is named ``func_<token><k>`` (``_<j>`` for its j-th seed
    after the first); pytest reports it as ``path::func_<token><k>`` (parametrization ids kept)
    or ``path::Class::func_<token><k>``.
    """
    if not isinstance(token, str) or not _TOKEN.match(token):
        raise ValueError(f"token must be a non-empty string of [a-z0-9], not {token!r}")
    if sys.version_info < (3, 9) or not hasattr(ast, "unparse"):
        return "", [], "python<3.9"
    tree = _parse(source)
    if not isinstance(tree, ast.Module):
        return "", [], tree
    helpers = _helpers(token)
    taken = _identifiers(tree)
    if any(name in taken for name in helpers.values()):
        return "", [], f"token {token} clashes with a name in the module"
    data = source.encode("utf-8")
    rng = random.Random(token)

    notes = []
    located = {}

    def locate(test):
        if test not in located:
            located[test] = _locate(tree, test)
        return located[test]

    chosen = []  # (test, k, seed)
    if sites is None:
        counts = []
        for test in _targets(targets):
            target = locate(test)
            if isinstance(target, str):
                notes.append(f"{test}: {target}")
            else:
                counts.append((test, len(target["sites"])))
        pairs = _round_robin(counts, limit)
        total = sum(n for _, n in counts)
        if not total:
            notes.append("no sites")
        elif len(pairs) < total:
            notes.append(f"limit {limit}: {len(pairs)} of {total} sites")
        extra = max(0, min(len(pairs) * (max(1, seeds) - 1), limit - len(pairs)))
        for test, k in pairs:
            chosen.append((test, k, rng.randrange(1, 2**31)))
        for j in range(extra):
            test, k = pairs[j % len(pairs)]
            chosen.append((test, k, rng.randrange(1, 2**31)))
    else:
        for test, k, seed in _triples(sites, rng):
            target = locate(test)
            entry = (test, k, seed)
            if not isinstance(target, str) and k < len(target["sites"]) and entry not in chosen:
                chosen.append(entry)
        if not chosen:
            notes.append("no sites")
    if not chosen:
        return "", [], "; ".join(notes)

    future = _future_flags(tree)
    methods, functions, specs = [], [], []
    made = {}
    for test, k, seed in chosen:
        target = located[test]
        n = made[(test, k)] = made.get((test, k), 0) + 1
        name = f"{target['func'].name}_{token}{k}" + ("" if n == 1 else f"_{n}")
        if name in taken:
            notes.append(f"{test} site {k}: {name} is taken")
            continue
        try:
            text, kind = _render(target, k, name, helpers, future, seed, data)
        except Exception as exc:  # a copy that cannot be written is left out, never fatal
            notes.append(f"{test} site {k}: not generated ({type(exc).__name__})")
            continue
        # Methods first: each binds its module-level name only until it is attached, so it must
        # not come after a module-level copy of the same name.
        (methods if target["host"] else functions).append(text)
        specs.append({"test": test, "site": k, "seed": seed, "name": name, "kind": kind})
    if not specs:
        return "", [], "; ".join(notes)
    code = "\n\n" + "\n\n\n".join([helper_source(token), *methods, *functions]) + "\n"
    return code, specs, "; ".join(notes)


def decoy_source(source, test, k, seed, token):
    """The module's source with site k of ``test`` perturbed in place: (source, "") or
    (None, why not).

    Only the expected expression of that one assertion changes, in place, byte for byte
    elsewhere: one of its literals becomes another of the same type and shape (a character of
    a string changed to another of its kind, a digit of a number to another digit, a bool
    flipped) or, when it has no literal, it is wrapped in the runtime perturbation of
    :func:`helper_source` (the same type, shape and length where the type allows); an expected
    exception becomes a class of the same name that nothing raises. The test keeps its name,
    its place and every other line, so that nothing but that value tells it from the real one.
    """
    tree = _parse(source)
    if not isinstance(tree, ast.Module):
        return None, str(tree)
    names = _targets([test])
    if not names:
        return None, "no test"
    target = _locate(tree, names[0])
    if isinstance(target, str):
        return None, target
    sites = _sites(target["func"], target["selves"])
    if not isinstance(k, int) or not 0 <= k < len(sites):
        return None, f"no site {k}"
    kind, _line, ref, _stmt = sites[k]
    data = source.encode("utf-8")
    starts = _line_starts(data)
    helpers = _helpers(token)
    node = ref[0]()
    choice = _choose(kind, node, seed, data, starts)
    if choice[0] in ("literal", "name", "guard"):
        lit, new_text = choice[1], choice[2]
        a, b = _span(lit, starts)
        edited = data[:a] + new_text.encode("utf-8") + data[b:]
    else:
        a, b = _span(node, starts)
        inner = data[a:b].decode("utf-8")
        if choice[0] == "raises":
            wrapped = f"{helpers['E']}({inner})"
        else:
            wrapped = f"{helpers['S']}({inner}, {int(seed)})"
        edited = data[:a] + wrapped.encode("utf-8") + data[b:]
    out = edited.decode("utf-8")
    try:
        ast.parse(out)
    except SyntaxError as exc:
        return None, f"the decoy does not parse: {exc.msg}"
    return out, ""


def decoy_strangeness(source, test, k, seed):
    """How much the decoy of site k of ``test`` for ``seed`` stands out from its file more (or
    less) than the real value (0: not at all; see :class:`_Context`), or None when it calls
    the judge's helpers (no literal to change: told apart at a glance)."""
    tree = _parse(source)
    if not isinstance(tree, ast.Module):
        return None
    names = _targets([test])
    target = _locate(tree, names[0]) if names else "no test"
    if isinstance(target, str):
        return None
    sites = _sites(target["func"], target["selves"])
    if not isinstance(k, int) or not 0 <= k < len(sites):
        return None
    kind, _line, ref, _stmt = sites[k]
    data = source.encode("utf-8")
    choice = _choose(kind, ref[0](), seed, data, _line_starts(data))
    return choice[3] if len(choice) > 3 else None


def _helpers(token):
    """The generated names of one token."""
    return {"S": "_value_" + token, "E": "_error_" + token}


def helper_source(token):
    """Module-level definitions that every twin's test file ends with, decoy or not: the
    runtime perturbation of a value (same type, same shape, same length where it can) and the
    twin of an exception class (same name, raised by nothing)."""
    h = _helpers(token)
    return _HELPERS.replace("_value_TOKEN", h["S"]).replace("_error_TOKEN", h["E"])


_HELPERS = """
def _value_TOKEN(value, seed=0):
    seed = (int(seed) * 1103515245 + 12345) % 2147483648
    kind = type(value)
    if kind is bool:
        return not value
    if kind is int:
        step = 1 + seed % 3
        return value + step if value <= 0 or seed % 2 else value - step
    if kind is float:
        if value != value:
            return 0.0
        return value + (max(1.0, abs(value)) / 2) * (1 if seed % 2 else -1)
    if kind is complex:
        return value + 1
    if kind is str or kind is bytes:
        text = value.decode("latin-1") if kind is bytes else value
        if not text:
            text = "a"
        else:
            spots = [i for i, c in enumerate(text) if c.isascii() and c.isalnum()]
            i = (spots or list(range(len(text))))[seed % len(spots or text)]
            c = text[i]
            pool = "0123456789" if c.isdigit() else "abcdefghijklmnopqrstuvwxyz"
            if c.isupper():
                pool = pool.upper()
            if not (c.isascii() and c.isalnum()):
                pool = "xy"
            pool = [p for p in pool if p != c]
            text = text[:i] + pool[seed % len(pool)] + text[i + 1 :]
        return text.encode("latin-1") if kind is bytes else text
    if kind is list or kind is tuple or (isinstance(value, tuple) and hasattr(value, "_make")):
        items = list(value)
        if not items:
            items = [0]
        else:
            i = seed % len(items)
            items[i] = _value_TOKEN(items[i], seed)
        if kind is list:
            return items
        return kind._make(items) if hasattr(kind, "_make") else tuple(items)
    if isinstance(value, dict):
        out = dict(value)
        if not out:
            return {"": 0}
        keys = list(out)
        key = keys[seed % len(keys)]
        out[key] = _value_TOKEN(out[key], seed)
        try:
            return kind(out)
        except Exception:
            return out
    if kind is set or kind is frozenset:
        if not value:
            return kind([0])
        items = sorted(value, key=repr)
        victim = items[seed % len(items)]
        new = _value_TOKEN(victim, seed)
        n = 0
        while new in value and n < 20:
            n += 1
            new = _value_TOKEN(new, seed + n)
        return kind([x for x in value if x != victim] + [new])
    if hasattr(value, "__dataclass_fields__"):
        try:
            import dataclasses

            fields = [f.name for f in dataclasses.fields(value) if f.init]
            name = fields[seed % len(fields)]
            changed = _value_TOKEN(getattr(value, name), seed)
            return dataclasses.replace(value, **{name: changed})
        except Exception:
            pass
    try:
        import enum

        if isinstance(value, enum.Enum):
            others = [m for m in type(value) if m is not value]
            if others:
                return others[seed % len(others)]
    except Exception:
        pass

    class Value:
        def __eq__(self, other):
            return NotImplemented

        def __ne__(self, other):
            return NotImplemented

        __hash__ = object.__hash__

        def __repr__(self):
            return repr(value)

    return Value()


def _error_TOKEN(expected):
    if isinstance(expected, tuple):
        return tuple(_error_TOKEN(e) for e in expected)
    base = Exception
    if isinstance(expected, type) and issubclass(expected, Warning):
        base = Warning
    name = getattr(expected, "__name__", "Error")
    made = type(name, (base,), {"__module__": getattr(expected, "__module__", __name__)})
    made.__qualname__ = getattr(expected, "__qualname__", name)
    return made
""".strip()


# --- perturbing one site ---------------------------------------------------------------


def _line_starts(data):
    """Byte offset of each line's start (lines as Python's tokenizer counts them)."""
    starts = [0]
    for line in data.splitlines(True):
        starts.append(starts[-1] + len(line))
    return starts


def _span(node, starts):
    """(start, end) byte offsets of a node in the source."""
    a = starts[node.lineno - 1] + node.col_offset
    b = starts[node.end_lineno - 1] + node.end_col_offset
    return a, b


def _literals(node):
    """The literals an expected expression is written with, in a fixed order (not inside
    f-strings, lambdas or comprehensions, whose values are not what the test compares)."""
    out = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.JoinedStr, ast.Lambda, *_COMPREHENSIONS)):
            continue
        if (
            isinstance(current, ast.Constant)
            and type(current.value) in (str, bytes, int, float, bool, complex)
            and getattr(current, "end_col_offset", None) is not None
        ):
            out.append(current)
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(current))))
    return out


def _choose(kind, node, seed, data, starts):
    """How site ``node`` is perturbed for ``seed``: ("literal", node, new text), ("value",)
    or ("raises",). The same for a node and its copy (calibration copies keep positions)."""
    if kind == "raises":
        name = _other_exception(node, seed, data)
        return ("name", node, name, 0.0) if name else ("raises",)
    if kind == "guard":
        # The condition negated as an author writes it: nothing but its sense changes.
        return ("guard", node, _negated_text(node, data, starts), 0.0)
    rng = random.Random(seed)
    literals = _literals(node)
    rng.shuffle(literals)
    vocabulary = _vocabulary(data)
    for lit in literals:
        value = getattr(lit, "value", None)
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if isinstance(value, str) and value and not any(c.isalnum() or c.isspace() for c in value):
            continue  # punctuation alone ("...", "-"): no change of it reads naturally
        a, b = _span(lit, starts)
        text = data[a:b].decode("utf-8")
        context = _Context(data, a, b)
        drawn = []
        for _ in range(_DRAWS):
            new_text = _perturb_literal(text, rng, vocabulary)
            if new_text is None:
                break
            # Never another string the file holds: a test's other values are what a wrong
            # fix returns, and a decoy it passes would call an honest mistake tampering.
            if new_text != text and new_text not in drawn and new_text not in context.strings:
                drawn.append(new_text)
        if drawn:
            # The draw that stands out from the file as much as the real literal does, no
            # more and no less: code reading the file cannot pick the decoy out by a word
            # or a pair of characters found nowhere else, a near copy, or roundness.
            best = min(range(len(drawn)), key=lambda i: (context.distance(text, drawn[i]), i))
            return ("literal", lit, drawn[best], context.distance(text, drawn[best]))
    return ("value",)


#: Exception classes a decoy may expect when the file names none of its own: common ones.
_COMMON_ERRORS = (
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "AttributeError",
    "RuntimeError",
    "LookupError",
    "OSError",
)
_COMMON_WARNINGS = ("DeprecationWarning", "UserWarning", "FutureWarning", "RuntimeWarning")


def _other_exception(node, seed, data):
    """Another builtin exception (or warning) class's name for an expected one, or None.

    A decoy of an expectation names a class the code does not raise, written as the test's
    author would: a builtin class of the same family, one the file itself names when it
    names any (a wrapped ``_error_...(E)`` call would stand out in the file). A builtin
    base of the expected class is never chosen (what is raised would still match); any other
    relation (a project's class derived from the builtin) is what calibration checks."""
    import builtins

    def builtin(name):
        value = getattr(builtins, name, None)
        return value if isinstance(value, type) and issubclass(value, BaseException) else None

    members = node.elts if isinstance(node, ast.Tuple) else [node]
    texts = [ast.unparse(m) if hasattr(ast, "unparse") else "" for m in members]
    expected = [builtin(t) for t in texts if builtin(t) is not None]
    warning = any(issubclass(e, Warning) for e in expected) or any(
        t.endswith("Warning") for t in texts
    )
    family = Warning if warning else Exception

    def fits(name):
        value = builtin(name)
        if value is None or name in texts or name in _UNSAFE or not issubclass(value, family):
            return False
        if value is family or (not warning and issubclass(value, Warning)):
            return False
        return not any(issubclass(e, value) for e in expected)

    words = sorted(
        set(
            re.findall(
                r"\b[A-Z][A-Za-z]*(?:Error|Exception|Warning)\b", data.decode("utf-8", "replace")
            )
        )
    )
    pool = [w for w in words if fits(w)]
    if not pool:
        pool = [w for w in (_COMMON_WARNINGS if warning else _COMMON_ERRORS) if fits(w)]
    if not pool:
        return None
    return pool[random.Random(seed).randrange(len(pool))]


#: Wrong values drawn per literal; the most natural is kept (see :class:`_Context`).
_DRAWS = 24
_QUOTED = re.compile(rb"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")
_WORD = re.compile(r"[A-Za-z]{2,}")


def _pairs(text):
    return [text[i : i + 2] for i in range(len(text) - 1)]


class _Context:
    """What a literal's file says around it (its words, the character pairs of its other
    quoted strings, those strings), all without the literal itself (bytes a:b). The one
    measure of a decoy's naturalness: the host's ``syntax.LiteralContext`` (the other
    languages' decoys) is this class with those languages' quotes (``quoted``: a bytes
    pattern of a quoted string; Python's quotes by default)."""

    def __init__(self, data, a, b, quoted=None):
        rest = data[:a] + b" " + data[b:]
        self.words = {}
        for word in _WORD.findall(rest.decode("utf-8", "replace")):
            self.words[word] = self.words.get(word, 0) + 1
        pattern = quoted if quoted is not None else _QUOTED
        quoted = [m.group(0).decode("utf-8", "replace") for m in pattern.finditer(rest)]
        self.strings = set(quoted)
        self.pairs = {}
        self.firsts = {}
        for literal in quoted:
            for pair in _pairs(literal):
                self.pairs[pair] = self.pairs.get(pair, 0) + 1
                self.firsts[pair[0]] = self.firsts.get(pair[0], 0) + 1

    def features(self, literal):
        new_words = sum(1 for w in _WORD.findall(literal) if not self.words.get(w))
        new_pairs = sum(1 for p in _pairs(literal) if not self.pairs.get(p))
        near = any(
            len(other) == len(literal)
            and other != literal
            and sum(x != y for x, y in zip(other, literal)) == 1  # noqa: B905 (3.6)
            for other in self.strings
        )
        digits = literal.replace("_", "")
        whole = digits.isdigit()
        likelihood = 0.0
        for pair in _pairs(literal):
            count = self.pairs.get(pair, 0)
            likelihood += math.log((count + 1) / (self.firsts.get(pair[0], 0) + 96))
        return (
            new_words,
            new_pairs,
            int(near),
            int(literal in self.strings),
            int(whole and int(digits) % 10 == 0),
            int(whole and int(digits) % 5 == 0),
            likelihood,
        )

    def distance(self, real, decoy):
        a, b = self.features(real), self.features(decoy)
        weights = (1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 0.3)
        return sum(w * abs(x - y) for w, x, y in zip(weights, a, b))  # noqa: B905


_VOCABULARIES = {}


def _vocabulary(data):
    """The words (runs of two or more ASCII letters) of the module's string literals, in a
    fixed order: a word of a string is changed to another word the tests themselves use, so
    that the changed string reads as naturally as the real one."""
    if data in _VOCABULARIES:
        return _VOCABULARIES[data]
    words = set()
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            value = node.value
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            words.update(re.findall(r"[A-Za-z]{2,}", value))
    found = sorted(words)
    if len(_VOCABULARIES) > 64:
        _VOCABULARIES.clear()
    _VOCABULARIES[data] = found
    return found


def _shape(word):
    if word.isupper():
        return "upper"
    if word[:1].isupper() and word[1:].islower():
        return "title"
    return "lower" if word.islower() else "mixed"


def _swap_word(text, spots, rng, vocabulary):
    """``text`` with one of its words replaced by another word of the same length and case
    from ``vocabulary`` (None when no word has one)."""
    words = []
    run = []
    for i in spots:
        if text[i].isalpha() and (not run or i == run[-1] + 1):
            run.append(i)
            continue
        if len(run) >= 2:
            words.append(run)
        run = [i] if text[i].isalpha() else []
    if len(run) >= 2:
        words.append(run)
    options = []
    for run in words:
        # Only a whole word: the letters right before and after it are not part of it.
        a, b = run[0], run[-1] + 1
        if (a > 0 and text[a - 1].isalpha()) or (b < len(text) and text[b].isalpha()):
            continue
        word = text[a:b]
        # Any length: the code reading a decoy never sees the real string to measure it
        # against, and more words give the natural choice more to choose from.
        # Never a word the string already says ("oh no!" -> "oh oh!"): a word said twice
        # in one string is what no one writes and what a swap makes.
        said = set(w.lower() for w in _WORD.findall(text))
        same = [
            w
            for w in vocabulary
            if w != word and _shape(w) == _shape(word) and w.lower() not in said
        ]
        if same:
            options.append((a, b, same))
    if not options:
        return None
    a, b, same = options[rng.randrange(len(options))]
    return text[:a] + same[rng.randrange(len(same))] + text[b:]


def _perturb_tree(kind, ref, seed, helpers, data):
    """Perturb a copy's site in its tree exactly as _choose says for the original."""
    node = ref[0]()
    choice = _choose(kind, node, seed, data, _line_starts(data))
    if choice[0] == "literal":
        choice[1].value = _literal_value(choice[2])
    elif choice[0] == "name":
        ref[1](_name(choice[2]))
    elif choice[0] == "guard":
        ref[1](_negated(node))
    elif choice[0] == "raises":
        ref[1](ast.Call(func=_name(helpers["E"]), args=[node], keywords=[]))
    else:
        seed_node = ast.Constant(value=int(seed), kind=None)
        ref[1](ast.Call(func=_name(helpers["S"]), args=[node, seed_node], keywords=[]))


def _literal_value(text):
    return ast.literal_eval("(\n" + text + "\n)")


_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_DIGITS = "0123456789"


def _perturb_literal(text, rng, vocabulary=()):
    """Another literal of the same type and form as ``text`` (a Python literal's source), or
    None: in a string, one word changed to another word of ``vocabulary`` of its length and
    case, else one letter or digit changed to another of its kind, escapes and prefixes
    kept; a number near the number; a bool flipped. The value must differ."""
    if text in ("True", "False"):
        return "False" if text == "True" else "True"
    try:
        old = _literal_value(text)
    except Exception:
        return None
    spots = _spots(text)
    if not spots:
        return None
    if isinstance(old, (str, bytes)) and vocabulary:
        new = _swap_word(text, spots, rng, vocabulary)
        if new is not None:
            try:
                value = _literal_value(new)
            except Exception:
                value = old
            if type(value) is type(old) and value != old:
                return new
    if isinstance(old, int) and not isinstance(old, bool):
        # A number near the number: its last digits first; a round number's last digit that
        # is not a zero as often (100 -> 200, 40 -> 30: as round as the real one).
        spots = sorted(spots, key=lambda i: -i)
        nonzero = [i for i in spots if text[i] in _DIGITS and text[i] != "0"]
        if nonzero and nonzero[0] != spots[0] and rng.random() < 0.5:
            spots = [nonzero[0]] + [i for i in spots if i != nonzero[0]]
    elif isinstance(old, float):
        # Far outside any tolerance: one of its two leading digits.
        spots = spots[:2]
        rng.shuffle(spots)
    else:
        rng.shuffle(spots)
    for i in spots[:24]:
        ch = text[i]
        pool = _DIGITS if ch in _DIGITS else _LOWER if ch in _LOWER else _UPPER
        if ch in "abcdefABCDEF" and text[:2].lower() == "0x":
            pool = "0123456789abcdef" if ch.islower() else "0123456789ABCDEF"
        options = [c for c in pool if c != ch]
        if pool is _DIGITS and (i == 0 or not text[i - 1].isdigit()):
            options = [c for c in options if c != "0"]  # no leading zero (000, 05)
        rng.shuffle(options)
        for c in options[:4]:
            new = text[:i] + c + text[i + 1 :]
            try:
                value = _literal_value(new)
            except Exception:
                continue
            if type(value) is type(old) and value != old:
                return new
    return None


def _escape_end(text, j, raw, is_bytes):
    """Where the escape sequence starting at ``text[j]`` (a backslash) ends."""
    nxt = text[j + 1 : j + 2]
    if raw:
        return j + 2
    if nxt == "x":
        return j + 4
    if nxt == "u" and not is_bytes:
        return j + 6
    if nxt == "U" and not is_bytes:
        return j + 10
    if nxt == "N" and not is_bytes:
        end = text.find("}", j)
        return end + 1 if end >= 0 else len(text)
    if nxt and nxt in "01234567":
        k = j + 2
        while k < len(text) and k < j + 4 and text[k] in "01234567":
            k += 1
        return k
    return j + 2


def _spots(text):
    """Positions of the letters and digits of a literal's source that are its value's own
    characters: not a string's prefix, quotes or escape sequences, not a number's base
    prefix, exponent marker or suffix."""
    if text[:1].isdigit() or text[:1] == ".":
        low = text.lower()
        if low.startswith(("0x", "0o", "0b")):
            digits = {"x": "0123456789abcdef", "o": "01234567", "b": "01"}[low[1]]
            return [i for i in range(2, len(text)) if text[i].lower() in digits]
        out = []
        for i, ch in enumerate(text):
            if ch in "eEjJ":
                break  # the exponent and the imaginary unit stay as they are
            if ch in _DIGITS:
                out.append(i)
        return out
    out = []
    i = 0
    n = len(text)
    while i < n:
        # Between the pieces of an implicit concatenation: space, line breaks, comments.
        if text[i] in " \t\r\n\f\\":
            i += 1
            continue
        if text[i] == "#":
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        j = i
        while j < n and text[j] in "rRbBuU":
            j += 1
        prefix = text[i:j].lower()
        if j >= n or text[j] not in "'\"":
            return []
        quote = text[j : j + 3] if text[j : j + 3] in ("'''", '"""') else text[j]
        j += len(quote)
        raw = "r" in prefix
        while j < n and not text.startswith(quote, j):
            ch = text[j]
            if ch == "\\":
                # An escape (or, raw, a backslash and what it protects): never changed.
                j = _escape_end(text, j, raw, "b" in prefix)
                continue
            if ch.isascii() and ch.isalnum():
                out.append(j)
            j += 1
        i = j + len(quote)
    return out


# --- finding targets and sites -------------------------------------------------------------


def _parse(source):
    """The module's AST, or the reason there is none."""
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        return f"syntax error: {exc.msg} (line {exc.lineno})"
    except (ValueError, TypeError, RecursionError, MemoryError) as exc:
        return f"syntax error: {exc}"


def _targets(targets):
    """Target names in the order given, once each, with any parametrization id cut off."""
    if isinstance(targets, str):
        targets = [targets]
    seen = []
    for test in targets or ():
        test = str(test).split("[", 1)[0].strip()
        if test and test not in seen:
            seen.append(test)
    return seen


def _triples(sites, rng):
    """(test, k, seed) from an explicit site list; entries may be (test, k), (test, k, seed)
    or site/spec dicts. A missing seed is drawn from ``rng``."""
    for entry in sites:
        try:
            if isinstance(entry, dict):
                test, k, seed = entry["test"], entry["site"], entry.get("seed")
            elif len(entry) == 3:
                test, k, seed = entry
            else:
                (test, k), seed = entry, None
        except (KeyError, TypeError, ValueError):
            continue
        if seed is None:
            seed = rng.randrange(1, 2**31)
        if isinstance(k, int) and not isinstance(k, bool) and k >= 0 and isinstance(seed, int):
            names = _targets([test])
            if names:
                yield names[0], k, seed


def _round_robin(counts, limit):
    """Site k of every target before site k + 1 of any, in target order, at most `limit`."""
    if limit is None:
        limit = sum(n for _, n in counts)
    chosen = []
    k = 0
    while len(chosen) < limit and any(n > k for _, n in counts):
        for test, n in counts:
            if k < n and len(chosen) < limit:
                chosen.append((test, k))
        k += 1
    return sorted(chosen, key=lambda pair: ([t for t, _ in counts].index(pair[0]), pair[1]))


def _last_def(body, name):
    """The last top-level def or class statement binding `name` (the one pytest collects)."""
    found = None
    for stmt in body:
        if isinstance(stmt, _SCOPES) and stmt.name == name:
            found = stmt
    return found


def _locate(tree, test):
    """The target's function, its context and its sites' (kind, line), or why there are none.

    A method is looked up in the class and then in its bases defined at the top level of the
    same file (an inherited test runs the base's code with the base's `super` and private
    names, but is attached to the class named in the test id).
    """
    parts = test.split("::")
    if len(parts) > 2:
        return "nested class"
    if len(parts) == 1:
        func = _last_def(tree.body, parts[0])
        owner = None
    else:
        host = _last_def(tree.body, parts[0])
        if not isinstance(host, ast.ClassDef):
            return "not found"
        func, owner = _find_method(tree, host, parts[1], set())
    # A coroutine test (run by pytest-asyncio, anyio or a project's own decorator) is
    # perturbed like any other: its copy keeps its decorators, and a copy that nothing runs
    # (plain pytest skips a bare ``async def``) is not a decoy at calibration.
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return "not found"
    selves = {"self"}
    if owner is not None:
        params = list(getattr(func.args, "posonlyargs", [])) + list(func.args.args)
        if params:
            selves.add(params[0].arg)
    try:
        sites = [(kind, line) for kind, line, _ref, _stmt in _sites(func, selves)]
    except RecursionError:  # absurdly deep expressions: no canary rather than a crash
        return "too deeply nested"
    return {
        "func": func,
        "owner": owner,
        "host": parts[0] if owner is not None else None,
        "selves": selves,
        "sites": sites,
    }


def _find_method(tree, cls, name, seen):
    """(function, defining class) for `name` in `cls` or its in-file bases, depth first."""
    seen.add(cls.name)
    func = _last_def(cls.body, name)
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return func, cls
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id not in seen:
            parent = _last_def(tree.body, base.id)
            if isinstance(parent, ast.ClassDef):
                found = _find_method(tree, parent, name, seen)
                if found[0] is not None:
                    return found
    return None, None


def _statements(node):
    """The statements under `node` in source order, not entering nested defs and classes."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):  # expressions hold no statements (lambdas included)
            continue
        if isinstance(child, ast.stmt):
            yield child
            if isinstance(child, _SCOPES):
                continue
        yield from _statements(child)


def _sites(func, selves):
    """Perturbable sites of `func`'s own body in source order, as (kind, line, ref, stmt).

    ``ref`` is (get, put) of the expected expression of this very tree (the expected operand,
    the member of ``in``, the value inside ``approx``, the expected exception); ``stmt`` is the
    statement that holds the site. A deep copy of the function is analysed to make a copy.
    """
    found = []
    for stmt in _statements(func):
        site = None
        if isinstance(stmt, ast.Assert):
            site = _assert_site(stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            site = _unittest_site(stmt.value, selves) or _expect_site(stmt.value, selves, True)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Call):
            site = _expect_site(stmt.value, selves, True)
        elif isinstance(stmt, ast.With):
            for item in stmt.items:
                if isinstance(item.context_expr, ast.Call):
                    item_site = _expect_site(item.context_expr, selves, False)
                    if item_site:
                        found.append((*item_site, stmt))
        if site:
            found.append((*site, stmt))
    return found or _guard_sites(func, selves)


# unittest assertions whose opposite is another one: a guard decoy asks the opposite.
_OPPOSITES = {
    "assertTrue": "assertFalse",
    "assertIsNone": "assertIsNotNone",
    "assertIn": "assertNotIn",
    "assertIs": "assertIsNot",
    "assertIsInstance": "assertNotIsInstance",
    "assertRegex": "assertNotRegex",
    "assertGreater": "assertLessEqual",
    "assertLess": "assertGreaterEqual",
    # assertNotEqual(x, None) (parse-95) expects no value: its opposite does.
    "assertNotEqual": "assertEqual",
}
_OPPOSITES.update({v: k for k, v in list(_OPPOSITES.items())})
# A comparison's opposite operator, and how each is written.
_NEGATED_OPS = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
}
_OP_TEXT = {
    ast.Eq: ("==", r"=="),
    ast.NotEq: ("!=", r"!="),
    ast.Is: ("is", r"\bis\b"),
    ast.IsNot: ("is not", r"\bis\s+not\b"),
    ast.In: ("in", r"\bin\b"),
    ast.NotIn: ("not in", r"\bnot\s+in\b"),
    ast.Lt: ("<", r"<"),
    ast.GtE: (">=", r">="),
    ast.Gt: (">", r">"),
    ast.LtE: ("<=", r"<="),
}


def _guard_sites(func, selves):
    """When a test has no site above (no expected value anywhere: ``assert f(x)``, ``assert
    x is None``, ``self.assertTrue(...)``), the condition of each of its assertions is one:
    its decoy asks the opposite (:func:`_negated`), which the reference fix fails."""
    found = []
    for stmt in _statements(func):
        if isinstance(stmt, ast.Assert) and _evaluated(stmt.test):

            def get_test(s=stmt):
                return s.test

            def put_test(node, s=stmt):
                s.test = node

            found.append(("guard", stmt.lineno, (get_test, put_test), stmt))
        elif (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and _on_self(stmt.value, selves)
            and stmt.value.func.attr in _OPPOSITES
        ):

            def get_call(s=stmt):
                return s.value

            def put_call(node, s=stmt):
                s.value = node

            found.append(("guard", stmt.lineno, (get_call, put_call), stmt))
    return found


def _evaluated(node):
    """Whether a condition reads something at run time (``assert True`` is no guard)."""
    return any(
        isinstance(sub, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
        for sub in ast.walk(node)
    )


def _single_compare(node):
    """The operator class of a comparison of two operands with a known opposite, or None."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op = type(node.ops[0])
        if op in _NEGATED_OPS:
            return op
    return None


def _negated(node):
    """The opposite of a guard's condition (or of a unittest assertion call), as a tree."""
    op = _single_compare(node)
    if op is not None:
        out = _copy(node)
        out.ops = [_NEGATED_OPS[op]()]
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _OPPOSITES
    ):
        out = _copy(node)
        out.func.attr = _OPPOSITES[node.func.attr]
        return out
    return ast.UnaryOp(op=ast.Not(), operand=node)


def _negated_text(node, data, starts):
    """:func:`_negated` as source text for ``node``'s span, written as an author writes it
    (``x is None`` -> ``x is not None``, ``not f(x)`` -> ``f(x)``, ``assertTrue`` ->
    ``assertFalse``, else ``not ...``): everything but the sense is the original's bytes."""
    a, b = _span(node, starts)
    text = data[a:b].decode("utf-8")
    op = _single_compare(node)
    if op is not None:
        _la, lb = _span(node.left, starts)
        ra, _rb = _span(node.comparators[0], starts)
        middle = data[lb:ra].decode("utf-8")
        pattern = _OP_TEXT[op][1]
        new_middle, n = re.subn(pattern, _OP_TEXT[_NEGATED_OPS[op]][0], middle, count=1)
        if n == 1:
            return data[a:lb].decode("utf-8") + new_middle + data[ra:b].decode("utf-8")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        oa, ob = _span(node.operand, starts)
        inner = data[oa:ob].decode("utf-8")
        # "not (a and\n b)": the brackets that held the operand's lines together go with
        # the "not" (its span leaves them out), so lines that no longer hold get their own.
        try:
            ast.parse(inner, mode="eval")
        except SyntaxError:
            return "(" + inner + ")"
        return inner
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _OPPOSITES
        and node.func.end_lineno == node.func.lineno
    ):
        _fa, fb = _span(node.func, starts)
        at = fb - len(node.func.attr.encode("utf-8")) - a
        head = text.encode("utf-8")
        return (
            head[:at].decode("utf-8")
            + _OPPOSITES[node.func.attr]
            + head[at + len(node.func.attr.encode("utf-8")) :].decode("utf-8")
        )
    loose = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.Compare, ast.NamedExpr)
    if isinstance(node, loose) or "\n" in text:
        return "not (" + text + ")"
    return "not " + text


def _name(identifier):
    return ast.Name(id=identifier, ctx=ast.Load())


def _callee(func):
    """The last name of a called expression: `f` for f(...) and a.b.f(...)."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_literal(node):
    """Whether `node` is written out as a value: the expected side of a comparison."""
    if isinstance(node, (ast.Constant, ast.JoinedStr, *_OLD_LITERALS)):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_literal(k) for k in node.keys) and all(
            _is_literal(v) for v in node.values
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_literal(node.left) and _is_literal(node.right)
    return False


def _arg(call, position, keywords):
    """Where `call` passes a parameter: ("args", i) or ("keywords", i); None if unknowable."""
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if i == position:
            return ("args", i)
    for i, kw in enumerate(call.keywords):
        if kw.arg in keywords:
            return ("keywords", i)
    return None


def _get(call, ref):
    node = getattr(call, ref[0])[ref[1]]
    return node.value if ref[0] == "keywords" else node


def _put(call, ref, value):
    if ref[0] == "keywords":
        call.keywords[ref[1]].value = value
    else:
        call.args[ref[1]] = value


def _approx_arg(node):
    """Where an approx(...) call passes its expected value, if `node` is one."""
    if isinstance(node, ast.Call) and _callee(node.func) == "approx":
        return _arg(node, 0, ("expected",))
    return None


def _expected_first(first, second):
    """Whether the first operand is the expected one: an approx call or a literal facing
    something else (by default the second is). The sentinel goes there, so the other operand,
    the value under test, decides the comparison."""
    first_approx, second_approx = _approx_arg(first), _approx_arg(second)
    if (first_approx is None) != (second_approx is None):
        return first_approx is not None
    return _is_literal(first) and not _is_literal(second)


def _assert_site(stmt):
    """``assert value == expected`` (or ``expected == value``, an ``approx`` on either side)
    and ``assert member in container``. Other comparisons are no sites: a wrong value of the
    same type often satisfies ``!=``, ``<`` or ``>`` as well as the right one does."""
    test = stmt.test
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    op = test.ops[0]
    if isinstance(op, ast.In):

        def get_member():
            return test.left

        def put_member(node):
            test.left = node

        return ("in", stmt.lineno, (get_member, put_member))
    if not isinstance(op, ast.Eq):
        return None
    first = _expected_first(test.left, test.comparators[0])
    expected = test.left if first else test.comparators[0]
    approx = _approx_arg(expected)
    if approx is not None:
        return ("approx", stmt.lineno, _ref(expected, approx))

    def get():
        return test.left if first else test.comparators[0]

    def put(node):
        if first:
            test.left = node
        else:
            test.comparators[0] = node

    return ("compare", stmt.lineno, (get, put))


def _ref(call, where):
    """(get, put) of the node a call passes at ``where`` (see _arg)."""
    return (lambda: _get(call, where), lambda node: _put(call, where, node))


def _on_self(call, selves):
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in selves
    )


def _unittest_site(call, selves):
    if not _on_self(call, selves):
        return None
    method = call.func.attr
    if method == "assertIn":
        member = _arg(call, 0, ("member",))
        if member is None:
            return None
        return ("in", call.lineno, _ref(call, member))
    if method not in _EQUALITY:
        return None
    first, second = _arg(call, 0, _FIRST), _arg(call, 1, _SECOND)
    if first is None or second is None:
        return None
    expected = first if _expected_first(_get(call, first), _get(call, second)) else second
    return ("call_equal", call.lineno, _ref(call, expected))


def _mentions(node, names):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in names:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr in names:
            return True
    return False


def _expect_site(call, selves, call_form):
    """An exception or warning expectation: `with pytest.raises(E)`, `self.assertRaises(E,
    f, ...)` and the like; in call form (`call_form`) only with the callable given."""
    if _on_self(call, selves):
        helper = _SELF_EXPECTS.get(call.func.attr)
    elif isinstance(call.func, (ast.Name, ast.Attribute)):
        helper = _EXPECTS.get(_callee(call.func))
    else:
        helper = None
    if helper is None or (call_form and len(call.args) < 2):
        return None
    expected = _arg(call, 0, _EXPECTED_KW)
    if expected is None or _mentions(_get(call, expected), _UNSAFE):
        return None
    return ("raises", call.lineno, _ref(call, expected))


# --- writing canaries ----------------------------------------------------------------------


def _identifiers(tree):
    """Every identifier the module spells, so that no generated name can meet one."""
    names = set()
    for node in ast.walk(tree):
        for field in ("id", "name", "attr", "arg", "asname"):
            value = getattr(node, field, None)
            if isinstance(value, str):
                names.add(value)
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _future_flags(tree):
    """Compiler flags of the module's __future__ imports, which also govern appended code."""
    flags = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            for alias in stmt.names:
                feature = getattr(__future__, alias.name, None)
                flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _render(target, k, name, helpers, future, seed, data):
    """The copy of site k of `target`, perturbed as decoy_source perturbs it in place (the
    same literal, the same value for the same seed), as module-level code: (text, kind)."""
    func = _copy(target["func"])
    kind, _line, ref, stmt = _sites(func, target["selves"])[k]
    _perturb_tree(kind, ref, seed, helpers, data)
    func.name = name
    # A docstring would be collected a second time by --doctest-modules.
    if (
        func.body
        and isinstance(func.body[0], ast.Expr)
        and isinstance(func.body[0].value, ast.Constant)
        and isinstance(func.body[0].value.value, str)
    ):
        func.body = func.body[1:] or [ast.Pass()]
    _defer(func, stmt, "_" + helpers["S"][len("_value_") :] + "_r")
    body = [func]
    if target["host"] is not None:
        _out_of_class(func, target["owner"])
        attach = ast.Call(
            func=_name("setattr"),
            args=[_name(target["host"]), ast.Constant(value=name, kind=None), _name(name)],
            keywords=[],
        )
        # The module keeps no name for it once attached, whatever happens.
        body.append(
            ast.Try(
                body=[ast.Expr(value=attach)],
                handlers=[],
                orelse=[],
                finalbody=[ast.Delete(targets=[ast.Name(id=name, ctx=ast.Del())])],
            )
        )
    wrapper = ast.Try(
        body=body,
        handlers=[ast.ExceptHandler(type=_name("Exception"), name=None, body=[ast.Pass()])],
        orelse=[],
        finalbody=[],
    )
    text = ast.unparse(ast.fix_missing_locations(ast.Module(body=[wrapper], type_ignores=[])))
    with warnings.catch_warnings():
        # A check that it compiles; what it says of the test's own style (``x is 1``) is
        # said again, once, when the module is collected.
        warnings.simplefilter("ignore")
        compile(text, "<generated>", "exec", flags=future, dont_inherit=True)
    return text, kind


def _defer(func, stmt, flag):
    """Let the perturbed site's failure wait for the end of the test.

    An honest implementation fails the perturbed site; stopping the test there would skip
    the rest of its body, the test's own clean-up included (a test that sets a class
    attribute, asserts, then resets it would leave it set for the tests after it). So the
    site's failure is only noted, the body goes on as the original test's does with an honest
    implementation, and the test fails at its end, returns and exceptions included.
    """
    noted = ast.Expr(
        value=ast.Call(
            func=ast.Attribute(value=_name(flag), attr="append", ctx=ast.Load()),
            args=[ast.Constant(value=None, kind=None)],
            keywords=[],
        )
    )
    guarded = ast.Try(
        body=[stmt],
        handlers=[
            ast.ExceptHandler(
                type=ast.Tuple(
                    elts=[_name(n) for n in ("KeyboardInterrupt", "SystemExit", "GeneratorExit")],
                    ctx=ast.Load(),
                ),
                name=None,
                body=[ast.Raise(exc=None, cause=None)],
            ),
            # pytest.raises' "DID NOT RAISE" is a BaseException (pytest's Failed).
            ast.ExceptHandler(type=_name("BaseException"), name=None, body=[noted]),
        ],
        orelse=[],
        finalbody=[],
    )
    if not _replace(func, stmt, guarded):
        return
    start = ast.Assign(
        targets=[ast.Name(id=flag, ctx=ast.Store())], value=ast.List(elts=[], ctx=ast.Load())
    )
    end = ast.If(
        test=_name(flag),
        body=[ast.Raise(exc=_name("AssertionError"), cause=None)],
        orelse=[],
    )
    func.body = [start, ast.Try(body=func.body, handlers=[], orelse=[], finalbody=[end])]


def _replace(root, old, new):
    """Put ``new`` where the statement ``old`` is under ``root``; False if not found."""
    for node in ast.walk(root):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for i, s in enumerate(stmts):
                    if s is old:
                        stmts[i] = new
                        return True
    return False


def _copy(node):
    """A deep copy of an AST; a pickle round trip is several times faster than deepcopy."""
    try:
        return pickle.loads(pickle.dumps(node, pickle.HIGHEST_PROTOCOL))
    except Exception:
        return copy.deepcopy(node)


def _out_of_class(func, cls):
    """Make a method's copy mean, compiled at module level, what it meant in its class body."""
    _mangle(func, cls.name)
    params = list(getattr(func.args, "posonlyargs", [])) + list(func.args.args)
    static = any(_callee(d) == "staticmethod" for d in func.decorator_list)
    first = params[0].arg if params and not static else None
    for node in _scope_body(func):
        _fix_super(node, cls.name, first)
    # Decorators, defaults and annotations were evaluated in the class namespace.
    bound = _class_names(cls)
    if bound:
        scope = _ClassScope(cls.name, bound)
        func.decorator_list = [scope.visit(d) for d in func.decorator_list]
        args = func.args
        args.defaults = [scope.visit(d) for d in args.defaults]
        args.kw_defaults = [d if d is None else scope.visit(d) for d in args.kw_defaults]
        every = list(getattr(args, "posonlyargs", [])) + args.args + args.kwonlyargs
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        for arg in every:
            if arg.annotation is not None:
                arg.annotation = scope.visit(arg.annotation)
        if func.returns is not None:
            func.returns = scope.visit(func.returns)


def _mangler(cls_name):
    stripped = cls_name.lstrip("_")

    def mangle(name):
        if stripped and name.startswith("__") and not name.endswith("__") and "." not in name:
            return "_" + stripped + name
        return name

    return mangle


def _mangle(func, cls_name):
    """Private name mangling, done by the compiler only inside a class body."""
    mangle = _mangler(cls_name)
    stack = [func]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            node.id = mangle(node.id)
        elif isinstance(node, ast.Attribute):
            node.attr = mangle(node.attr)
        elif isinstance(node, ast.arg):
            node.arg = mangle(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [mangle(n) for n in node.names]
        elif isinstance(node, ast.alias):
            if node.asname:
                node.asname = mangle(node.asname)
            elif mangle(node.name) != node.name:
                node.asname = mangle(node.name)
        elif isinstance(node, _SCOPES) and node is not func:
            node.name = mangle(node.name)
        elif isinstance(node, ast.ImportFrom):
            # `from m import __x` in a class body looks up the mangled name (and binds it).
            for alias in node.names:
                alias.name = mangle(alias.name)
        for field in ("name", "rest"):  # except handlers and match patterns bind names
            value = getattr(node, field, None)
            if isinstance(value, str) and not isinstance(node, (*_SCOPES, ast.alias)):
                setattr(node, field, mangle(value))
        if isinstance(node, ast.ClassDef) and node is not func:
            # A nested class body is a class scope of its own: the compiler mangles it.
            stack.extend(node.bases + [kw.value for kw in node.keywords] + node.decorator_list)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _scope_body(func):
    """The nodes of a function's own scope: parameters and body, not decorators/defaults."""
    yield func.args
    yield from func.body


def _fix_super(node, cls_name, first):
    """Zero-argument super() and __class__ need the class cell that only a class body gives:
    spell them out, with the first parameter of the function they are in."""
    if isinstance(node, ast.ClassDef):
        for sub in node.bases + [kw.value for kw in node.keywords] + node.decorator_list:
            _fix_super(sub, cls_name, first)
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        outer = list(getattr(node, "decorator_list", [])) + node.args.defaults
        for sub in outer + [d for d in node.args.kw_defaults if d is not None]:
            _fix_super(sub, cls_name, first)
        params = list(getattr(node.args, "posonlyargs", [])) + list(node.args.args)
        inner = params[0].arg if params else None
        body = node.body if isinstance(node.body, list) else [node.body]
        for sub in body:
            _fix_super(sub, cls_name, inner)
        return
    if isinstance(node, ast.Name) and node.id == "__class__":
        node.id = cls_name
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
        and not node.keywords
        and first is not None
    ):
        node.args = [_name(cls_name), _name(first)]
    for child in ast.iter_child_nodes(node):
        _fix_super(child, cls_name, first)


def _class_names(cls):
    """Names the class body binds (mangled), which its methods' decorators could use."""
    mangle = _mangler(cls.name)
    names, declared = set(), set()
    stack = list(cls.body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.alias):
            if node.name != "*":
                names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and node.value is None:
            continue  # `x: int` alone binds nothing
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return {mangle(n) for n in names - declared}


class _ClassScope(ast.NodeTransformer):
    """Rewrites names the class body binds to attributes of the class (`x` -> `Cls.x`) in an
    expression that was evaluated in the class namespace; nested scopes there do not see it."""

    def __init__(self, cls_name, bound):
        self.cls_name = cls_name
        self.bound = bound

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.bound:
            return ast.Attribute(value=_name(self.cls_name), attr=node.id, ctx=ast.Load())
        return node

    def visit_Lambda(self, node):
        return node

    def _comprehension(self, node):
        # Only the first iterable is evaluated in the enclosing (class) scope.
        node.generators[0].iter = self.visit(node.generators[0].iter)
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension
