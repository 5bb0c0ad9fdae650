"""One Rust file's walk for the capability scan: the file read as one token stream (the
syntax tree's leaves, literals whole, brackets matched), names bound by ``use`` and
``extern crate``, then paths, macros, attributes, keywords and strings against the rules of
:mod:`swe_forge.ecosystems.rust.scan_rules`.

Strings are folded with :mod:`swe_forge.ecosystems.rust.scan_fold`; the entry point is
:func:`swe_forge.ecosystems.rust.scan.scan`. Kept apart from it because the walk is long.
"""

from __future__ import annotations

from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.rust.scan_fold import (
    _FOLDING_MACROS,
    _FROM_BYTES,
    _MAX_TEXT,
    _format,
    _literal,
    _Tok,
)
from swe_forge.ecosystems.rust.scan_rules import (
    _ANY,
    _ASSERTION_MACROS,
    _ATTRIBUTES,
    _COMPARISON_TRAITS,
    _FRAGMENT_ROOTS,
    _HEADER_LIMIT,
    _LAST_SEGMENTS,
    _MACROS,
    _METAVARIABLES,
    _PATH_VARIABLE,
    _PATHS_BY_ROOT,
    _RUNNER_TEXT,
    _STD_MACROS,
    COMPARISON,
    EXTERN,
    LIFETIME_HOLE,
    MODULE_PATH,
    RUNNER_TEXT,
    SHADOWED_MACRO,
    SOURCE_PATHS,
    UNSAFE,
    _matches,
    _normal,
)
from swe_forge.ecosystems.scanning import (
    UNPARSABLE,
    Findings,
    Parents,
    add_finding,
    postorder,
    text_capabilities,
)

_LITERALS = frozenset(
    {
        "string_literal",
        "raw_string_literal",
        "char_literal",
        "integer_literal",
        "float_literal",
        "boolean_literal",
    }
)
_SKIPPED = frozenset({"line_comment", "block_comment"})
_NAMES = frozenset({"identifier", "type_identifier", "field_identifier", "self", "super", "crate"})
_OPEN = {"(": ")", "[": "]", "{": "}"}
_KEYWORDS = frozenset(
    {"as", "const", "crate", "extern", "fn", "self", "static", "super", "unsafe", "use"}
)
_BUILT = frozenset({"metavariable", "$", "["})
_MAX_DEPTH = 48


class _Scan:
    """One file's token stream: names bound by ``use``, then paths, macros, attributes,
    keywords and strings against the rules."""

    def __init__(self, root: Any, found: Findings, fragment: bool) -> None:
        self.root = root
        self.found = found
        self.fragment = fragment
        self.toks: list[_Tok] = []
        self.close: dict[int, int] = {}  # index of an opening bracket -> its closing one
        #: local name -> the paths it is bound to (``use``, ``extern crate``).
        self.bindings: dict[str, set[tuple[str, ...]]] = {}
        self.globs: set[tuple[str, ...]] = set()
        self.local_macros: set[str] = set()
        self.constants: dict[str, str] = {}

    def add(self, name: str, line: int, evidence: str) -> None:
        add_finding(self.found, name, line, evidence)

    def run(self) -> None:
        self._tokenize()
        self._declarations()
        self._shadowed_macros()
        self._strings()
        toks = self.toks
        for i, tok in enumerate(toks):
            kind = tok.kind
            if kind == "unsafe":
                self.add(UNSAFE, tok.line, self._context(i))
            elif kind == "extern":
                self._extern(i)
            elif kind == "#":
                self._attribute(i)
            elif kind == "impl" or (kind == "identifier" and tok.text == "impl"):
                self._impl(i)
            elif kind in _NAMES and not self._continues_path(i):
                self._path(i)
        self._lifetime_holes()

    def _lifetime_holes(self) -> None:
        """The shapes of rustc's implied-bounds soundness hole (rust-lang/rust#25860, the
        ``cve-rs`` family): a reference to a reference, both with lifetimes (``&'a &'b ()``,
        whose implied bound ``'b: 'a`` a function pointer then forgets), and a function
        pointer type that is higher-ranked or returns a reference of a named lifetime
        (``for<'x> fn(_, &'x T) -> &'b T``). Through them safe code extends any lifetime,
        then reads freed or foreign memory: a sixth red team read its test binary's
        literals that way, with no ``unsafe`` (3 of 3 on rustkit-2)."""
        for node in syntax.walk(self.root):
            kind = node.type
            if kind == "reference_type":
                kinds = [c.type for c in node.children]
                inner = node.children[-1] if node.children else None
                if (
                    "lifetime" in kinds
                    and inner is not None
                    and inner.type == "reference_type"
                    and any(c.type == "lifetime" for c in inner.children)
                ):
                    self.add(LIFETIME_HOLE, syntax.line(node), syntax.text(node)[:200])
            elif kind == "function_type":
                ret = node.child_by_field_name("return_type")
                named = ret is not None and any(n.type == "lifetime" for n in syntax.walk(ret))
                if named or any(c.type == "for_lifetimes" for c in node.children):
                    self.add(LIFETIME_HOLE, syntax.line(node), syntax.text(node)[:200])

    def _impl(self, i: int) -> None:
        """An ``impl`` of a comparison trait written by hand: ``assert_eq!`` and ``==`` call
        it with the test's expected value (a red team's forged 5/5: a return value equal to
        what the honest twin expects and to no decoy's). ``derive`` is not an ``impl``.

        The whole header is read (a second red team pushed the trait past a window with 40
        lifetimes), and an impl whose trait or type is a macro's metavariable (``impl $tr<$t>
        for X`` in a ``macro_rules!`` body) counts too: what it implements is known only where
        the macro is called, with names no path says."""
        for tok in self.toks[i + 1 : i + 1 + _HEADER_LIMIT]:
            if tok.kind in ("{", ";"):
                return
            if tok.text in _COMPARISON_TRAITS or tok.kind in _METAVARIABLES or tok.text == "$":
                self.add(COMPARISON, tok.line, self._context(i))
                return
        # A header longer than any written by hand: what it implements is not read.
        self.add(COMPARISON, self.toks[i].line, self._context(i))

    # --------------------------------------------------------------------------- tokens
    def _tokenize(self) -> None:
        """The file's leaves in order (literals whole, comments left out), brackets matched."""
        stack = [self.root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind in _SKIPPED:
                continue
            if kind in _LITERALS or not node.children:
                text = syntax.text(node)
                if kind == "identifier":
                    if text.startswith("r#"):
                        text = text[2:]  # a raw identifier is the same name
                    elif text in _KEYWORDS:
                        kind = text  # token trees leave some keywords as identifiers
                if text or kind in _LITERALS:
                    self.toks.append(_Tok(kind, text, syntax.line(node)))
                continue
            stack.extend(reversed(node.children))
        opened: list[int] = []
        for i, tok in enumerate(self.toks):
            if tok.kind in _OPEN:
                opened.append(i)
            elif tok.kind in (")", "]", "}") and opened:
                self.close[opened.pop()] = i

    def _context(self, i: int) -> str:
        return " ".join(t.text for t in self.toks[max(0, i - 2) : i + 6])

    def _continues_path(self, i: int) -> bool:
        """Is the name at ``i`` a later segment of a path, a field or a method? (A path
        may start with ``::``: ``::std::process::exit``.)"""
        if i == 0:
            return False
        prev = self.toks[i - 1].kind
        if prev == ".":
            return True
        return prev == "::" and i > 1 and self.toks[i - 2].kind in (*_NAMES, ">", "metavariable")

    def _read_path(self, i: int) -> tuple[list[str], int]:
        """The segments of the path starting at ``i`` and the index after it."""
        segs: list[str] = []
        toks = self.toks
        if toks[i].kind == "::":
            i += 1
        while i < len(toks) and toks[i].kind in _NAMES:
            segs.append(toks[i].text)
            if i + 2 < len(toks) and toks[i + 1].kind == "::" and toks[i + 2].kind in _NAMES:
                i += 2
                continue
            if i + 2 < len(toks) and toks[i + 1].kind == "::" and toks[i + 2].kind in _BUILT:
                # std::process::$name, std::process::[<ex it>] (paste): a segment a macro
                # builds, which may be any member of the module.
                segs.append(_ANY)
                i += 3
                break
            i += 1
            break
        return segs, i

    # ---------------------------------------------------------------------- declarations
    def _declarations(self) -> None:
        toks = self.toks
        for i, tok in enumerate(toks):
            if tok.kind == "use":
                self._use(i + 1)
            elif tok.kind == "extern" and i + 1 < len(toks) and toks[i + 1].kind == "crate":
                segs, j = self._read_path(i + 2)
                if segs:
                    alias = segs[-1]
                    if j + 1 < len(toks) and toks[j].kind == "as":
                        alias = toks[j + 1].text
                    self.bindings.setdefault(alias, set()).add(tuple(segs))
            elif tok.kind == "macro_rules!" and i + 1 < len(toks):
                self.local_macros.add(toks[i + 1].text)
            elif (
                tok.kind in ("const", "static")
                and i + 1 < len(toks)
                and toks[i + 1].kind == "identifier"
            ):
                self._constant(i)

    def _shadowed_macros(self) -> None:
        """A std macro's name given to a ``macro_rules!`` or to an import of something else
        (a tenth red team's Java counterpart: a class in ``org.junit`` that judged the
        tests' assertions)."""
        for i, tok in enumerate(self.toks):
            if tok.kind == "macro_rules!" and i + 1 < len(self.toks):
                name = self.toks[i + 1].text
                if name in _STD_MACROS:
                    self.add(SHADOWED_MACRO, tok.line, f"macro_rules! {name}")
        for name in sorted(_ASSERTION_MACROS & set(self.bindings)):
            for path in sorted(self.bindings[name]):
                if path and path[0] not in ("std", "core", "alloc"):
                    self.add(SHADOWED_MACRO, 1, f"use {'::'.join(path)} as {name}")

    def _use(self, i: int) -> None:
        """Bindings of one ``use`` tree starting at token ``i`` (braces, self, as, globs)."""
        # (prefix, index) of the trees to read; braced lists push one per item.
        work: list[tuple[tuple[str, ...], int, int]] = [((), i, 0)]
        toks = self.toks
        while work:
            prefix, j, depth = work.pop()
            if depth > _MAX_DEPTH or j >= len(toks):
                continue
            if toks[j].kind == "::":
                j += 1
            segs: list[str] = []
            while j < len(toks) and toks[j].kind in _NAMES:
                segs.append(toks[j].text)
                if j + 1 < len(toks) and toks[j + 1].kind == "::":
                    j += 2
                    continue
                j += 1
                break
            path = prefix + tuple(segs)
            if j < len(toks) and toks[j].kind == "*":
                self.globs.add(_normal(self._resolve_use(path)))
                continue
            if j < len(toks) and toks[j].kind == "{":
                end = self.close.get(j, len(toks))
                for start in self._items(j + 1, end):
                    work.append((path, start, depth + 1))
                continue
            if not segs:
                continue
            alias = segs[-1]
            if j + 1 < len(toks) and toks[j].kind == "as":
                alias = toks[j + 1].text
            if path[-1] == "self":
                path = path[:-1]
                if alias == "self" and path:
                    alias = path[-1]
            if path and path[-1] in _COMPARISON_TRAITS and alias != path[-1]:
                # A comparison trait under another name, from wherever it is re-exported
                # (``std::prelude::rust_2021::PartialEq as Agrees``): an impl would not
                # show it (a fourteenth red team's 3 of 3).
                self.add(COMPARISON, toks[i].line, f"use {'::'.join(path)} as {alias}")
            if alias != "_":
                self.bindings.setdefault(alias, set()).add(_normal(self._resolve_use(path)))

    def _resolve_use(self, path: tuple[str, ...]) -> tuple[str, ...]:
        """A use path whose first segment is itself a name bound by another use."""
        if path and path[0] not in ("std", "core", "alloc", "crate", "self", "super"):
            bound = self.bindings.get(path[0])
            if bound and len(bound) == 1:
                return next(iter(bound)) + path[1:]
        return path

    def _items(self, start: int, end: int) -> list[int]:
        """Start indexes of the comma-separated items between ``start`` and ``end``."""
        items = [start]
        i = start
        while i < end:
            kind = self.toks[i].kind
            if kind in _OPEN:
                i = self.close.get(i, end) + 1
                continue
            if kind == ",":
                items.append(i + 1)
            i += 1
        return [s for s in items if s < end]

    def _constant(self, i: int) -> None:
        """``const NAME: &str = "...";``: the name's folded value."""
        toks = self.toks
        name = toks[i + 1].text
        j = i + 2
        while j < len(toks) and toks[j].kind not in ("=", ";"):
            j += 1
        if j + 2 < len(toks) and toks[j].kind == "=" and toks[j + 2].kind == ";":
            value = _literal(toks[j + 1])
            if isinstance(value, str):
                self.constants[name] = value

    # ---------------------------------------------------------------------------- rules
    def _path(self, i: int) -> None:
        start = i - 1 if i > 0 and self.toks[i - 1].kind == "::" else i
        segs, j = self._read_path(start)
        if not segs:
            return
        line = self.toks[i].line
        evidence = "::".join(segs)
        is_macro = j < len(self.toks) and self.toks[j].kind == "!"
        for full in self._resolve(segs):
            if is_macro:
                self._macro(full, segs, j, line)
            for prefix, cap in _PATHS_BY_ROOT.get(full[0], ()):
                if _matches(full, prefix):
                    self.add(cap, line, evidence)
        last = _LAST_SEGMENTS.get(segs[-1])
        if last is not None:
            self.add(last, line, evidence)

    def _resolve(self, segs: list[str]) -> list[tuple[str, ...]]:
        """The real paths a path written in the file may be (aliases, globs, std's roots)."""
        head, rest = segs[0], tuple(segs[1:])
        out = [_normal(tuple(segs))]
        for bound in self.bindings.get(head, ()):
            out.append(_normal(bound + rest))
        if head not in self.bindings:
            out.extend(glob + tuple(segs) for glob in self.globs)
            if self.fragment and head in _FRAGMENT_ROOTS and len(segs) > 1:
                out.append(_FRAGMENT_ROOTS[head] + rest)
        return out

    def _macro(self, full: tuple[str, ...], segs: list[str], bang: int, line: int) -> None:
        name = full[-1]
        std = len(full) > 1 and full[0] == "std"
        bare = len(full) == 1 and name not in self.local_macros
        if not (std or bare) and name not in ("include", "include_str", "include_bytes"):
            return
        cap = _MACROS.get(name)
        if cap is not None:
            self.add(cap, line, "::".join(segs) + "!")
        if name in ("env", "option_env"):
            args = self._macro_args(bang + 1)
            value = self._fold_arg(args[0], 0) if args else None
            if value is None or _PATH_VARIABLE.search(value):
                self.add(SOURCE_PATHS, line, f"{name}!({value or '...'})")

    def _macro_args(self, open_index: int) -> list[tuple[int, int]]:
        """(start, end) of each top-level argument of the token tree opening at the index."""
        if open_index >= len(self.toks) or self.toks[open_index].kind not in _OPEN:
            return []
        end = self.close.get(open_index, len(self.toks))
        starts = self._items(open_index + 1, end)
        if not starts:
            return []
        bounds = [*starts[1:], end + 1]
        return [(s, b - 1) for s, b in zip(starts, bounds, strict=True) if s < b - 1]

    def _extern(self, i: int) -> None:
        """``extern "C" { .. }``, ``extern { .. }`` and ``extern "C" fn``: foreign code and
        symbols the linker resolves (``extern crate`` is a plain dependency)."""
        nxt = self.toks[i + 1].kind if i + 1 < len(self.toks) else ""
        if nxt in ("string_literal", "raw_string_literal", "{", "fn"):
            self.add(EXTERN, self.toks[i].line, self._context(i))

    def _attribute(self, i: int) -> None:
        """``#[...]`` / ``#![...]``: each attribute, read through ``cfg_attr(pred, ...)`` and
        ``unsafe(...)``."""
        toks = self.toks
        j = i + 1
        if j < len(toks) and toks[j].kind == "!":
            j += 1
        if j >= len(toks) or toks[j].kind != "[":
            return
        end = self.close.get(j, len(toks))
        work = [(start, end, 0) for start in self._items(j + 1, end)]
        while work:
            start, stop, depth = work.pop()
            if depth > _MAX_DEPTH:
                self.add(UNPARSABLE, toks[start].line, "attributes nested too deep")
                continue
            if toks[start].kind == "unsafe":  # #[unsafe(no_mangle)], edition 2024
                segs, k = ["unsafe"], start + 1
            else:
                segs, k = self._read_path(start)
            if not segs:
                continue
            name = segs[-1]
            # An attribute macro imported under another name (use ctor::ctor as init).
            names = {name} | {full[-1] for full in self._resolve(segs) if full}
            if name in ("cfg_attr", "unsafe") and k < stop and toks[k].kind == "(":
                inner_end = self.close.get(k, stop)
                items = self._items(k + 1, inner_end)
                if name == "cfg_attr":
                    items = items[1:]  # the predicate
                work.extend((s, inner_end, depth + 1) for s in items)
                continue
            if "path" in names and segs == ["path"] and not self._rust_file(k, stop):
                # rustc compiles the file a module's path attribute names whatever its
                # extension: code the scan of .rs files would never read.
                self.add(MODULE_PATH, toks[start].line, "#[path = ...] naming no .rs file")
            for known in names:
                cap = _ATTRIBUTES.get(known)
                if cap is not None:
                    self.add(cap, toks[start].line, "#[" + "::".join(segs) + "]")

    def _rust_file(self, k: int, stop: int) -> bool:
        """``= "<...>.rs"`` and nothing else from ``k`` to ``stop`` (an attribute's value)."""
        toks = self.toks
        if k + 2 > stop or toks[k].kind != "=":
            return False
        if k + 2 < stop and toks[k + 2].kind != ",":
            return False
        value = _literal(toks[k + 1]) if toks[k + 1].kind.endswith("string_literal") else None
        return isinstance(value, str) and value.endswith(".rs") and "\x00" not in value

    # -------------------------------------------------------------------------- strings
    def _strings(self) -> None:
        """Judge every literal, every foldable macro of strings and every concatenation."""
        for tok in self.toks:
            if tok.kind in ("string_literal", "raw_string_literal", "char_literal"):
                value = _literal(tok)
                if isinstance(value, str):
                    self._judge(value, tok.line, tok.text)
        toks = self.toks
        for i, tok in enumerate(toks):
            if (
                tok.kind == "identifier"
                and tok.text in _FOLDING_MACROS
                and i + 2 < len(toks)
                and toks[i + 1].kind == "!"
            ):
                value = self._fold_macro(tok.text, i + 2, 0)
                if value is not None:
                    self._judge(value, tok.line, f"{tok.text}!(...)")
        self._expressions()

    def _judge(self, value: str, line: int, evidence: str) -> None:
        if _RUNNER_TEXT.search(value):
            self.add(RUNNER_TEXT, line, evidence)
        for cap in text_capabilities(value):
            self.add(cap, line, evidence)

    def _fold_macro(self, name: str, open_index: int, depth: int) -> str | None:
        """``concat!``, ``stringify!``, ``format!``-like macros of constant arguments (the
        non-constant parts of a format left out)."""
        toks = self.toks
        if depth > _MAX_DEPTH or open_index >= len(toks) or toks[open_index].kind not in _OPEN:
            return None
        end = self.close.get(open_index, len(toks))
        if name == "stringify":
            return " ".join(t.text for t in toks[open_index + 1 : end])[:_MAX_TEXT]
        args = self._macro_args(open_index)
        if name in ("concat", "concat_idents"):
            parts = [self._fold_arg(a, depth + 1) for a in args]
            if any(p is None for p in parts):
                return None
            return "".join(p or "" for p in parts)[:_MAX_TEXT]
        # format!-like: the first string argument is the template, then its arguments.
        skip = 1 if name in ("write", "writeln") else 0
        if len(args) <= skip:
            return None
        template = self._fold_arg(args[skip], depth + 1)
        if template is None:
            return None
        values = [self._fold_arg(a, depth + 1) for a in args[skip + 1 :]]
        return _format(template, values)

    def _fold_arg(self, bounds: tuple[int, int], depth: int) -> str | None:
        start, end = bounds
        toks = self.toks
        if end - start == 1:
            tok = toks[start]
            value = _literal(tok)
            if value is None and tok.kind == "identifier":
                return self.constants.get(tok.text)
            return None if value is None else str(value)
        if (
            end - start >= 3
            and toks[start].kind == "identifier"
            and toks[start + 1].kind == "!"
            and toks[start].text in _FOLDING_MACROS
        ):
            return self._fold_macro(toks[start].text, start + 2, depth)
        return None

    def _expressions(self) -> None:
        """``"a".to_string() + "b"``, ``N as char``, ``[..].concat()``: folded bottom-up on
        the tree (outside macros, where there is one)."""
        values: dict[int, str] = {}
        for node in postorder(self.root):
            value = self._fold_node(node, values)
            if value is not None:
                values[node.id] = value
        up = Parents(self.root)
        for node in syntax.walk(self.root):
            value = values.get(node.id)
            if value is None or node.type in _LITERALS:
                continue
            parent = up.parent(node)
            if parent is not None and parent.id in values:
                continue
            self._judge(value, syntax.line(node), syntax.text(node))

    def _fold_node(self, node: Any, values: dict[int, str]) -> str | None:
        kind = node.type
        if kind in ("string_literal", "raw_string_literal", "char_literal"):
            value = _literal(_Tok(kind, syntax.text(node), 0))
            return value if isinstance(value, str) else None
        if kind == "identifier":
            return self.constants.get(syntax.text(node))
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return values.get(node.named_children[0].id)
        if kind == "binary_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            op = node.child_by_field_name("operator")
            if left is None or right is None or op is None or syntax.text(op) != "+":
                return None
            a, b = values.get(left.id), values.get(right.id)
            if a is None and b is None:
                return None
            return ((a or "") + (b or ""))[:_MAX_TEXT]
        if kind == "type_cast_expression":
            value = node.child_by_field_name("value")
            target = node.child_by_field_name("type")
            if value is not None and target is not None and syntax.text(target) == "char":
                number = _literal(_Tok(value.type, syntax.text(value), 0))
                if isinstance(number, int) and 0 <= number <= 0x10FFFF:
                    return chr(number)
            return None
        if kind == "call_expression":
            return self._fold_call(node, values)
        return None

    def _fold_call(self, node: Any, values: dict[int, str]) -> str | None:
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is None or args is None:
            return None
        if fn.type == "field_expression":
            method = fn.child_by_field_name("field")
            receiver = fn.child_by_field_name("value")
            name = syntax.text(method) if method is not None else ""
            if receiver is None:
                return None
            if name in ("to_string", "to_owned", "into", "as_str", "clone"):
                return values.get(receiver.id)
            if name in ("concat", "join") and receiver.type in ("array_expression",):
                items = [values.get(c.id) for c in receiver.named_children]
                if any(i is None for i in items):
                    return None
                sep = ""
                if name == "join":
                    arg = args.named_children[0] if args.named_children else None
                    sep = values.get(arg.id, "") if arg is not None else ""
                return sep.join(i or "" for i in items)[:_MAX_TEXT]
            return None
        callee = syntax.text(fn).replace(" ", "")
        arg = args.named_children[0] if args.named_children else None
        if callee in ("String::from", "str::to_string", "From::from"):
            return values.get(arg.id) if arg is not None else None
        if callee.rsplit("::", 1)[-1] in _FROM_BYTES and arg is not None:
            return self._bytes(arg)
        return None

    def _bytes(self, node: Any) -> str | None:
        """The text of ``vec![..]``, ``&[..]`` or ``b".."`` of constant bytes."""
        while node.type == "reference_expression" and node.named_children:
            node = node.named_children[-1]
        if node.type == "string_literal":
            value = _literal(_Tok(node.type, syntax.text(node), 0))
            return value if isinstance(value, str) else None
        if node.type == "array_expression":
            items = [_literal(_Tok(c.type, syntax.text(c), 0)) for c in node.named_children]
        elif node.type == "macro_invocation" and syntax.text(node).startswith("vec!"):
            tree = next((c for c in node.children if c.type == "token_tree"), None)
            items = [
                _literal(_Tok(c.type, syntax.text(c), 0))
                for c in (tree.named_children if tree is not None else ())
            ]
        else:
            return None
        if not items or not all(isinstance(i, int) and 0 <= i < 256 for i in items):
            return None
        return bytes(int(i or 0) for i in items).decode("utf-8", "replace")
