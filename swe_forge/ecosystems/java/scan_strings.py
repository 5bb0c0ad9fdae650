"""String folding in the Java capability scan: the constant value of each expression
(strings, chars, numbers, arrays; concatenation, ``String.valueOf``, ``String.join``,
``String.format``, ``StringBuilder`` chains, path pieces) and the judging of the outermost
strings against the runner's and the framework's text.

:class:`_Strings` is a layer of the scan's walk, between name resolution
(:mod:`swe_forge.ecosystems.java.scan_names`) and the rules
(:mod:`swe_forge.ecosystems.java.scan_rules`); after it, the folded values (``_Str``,
``_Char``) and the helpers that fold them and read literals. Kept apart because folding is
self-contained and long.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.java.scan_names import _member_name, _Names, _type_text
from swe_forge.ecosystems.java.scan_tables import (
    _FRAMEWORK_TEXT,
    _JAVA_COMMAND,
    _LITERALS,
    _MAX_TEXT,
    _RUNNER_TEXT,
    FRAMEWORK,
    PROPERTIES,
    RUNNER_TEXT,
)
from swe_forge.ecosystems.scanning import decode_escapes, postorder, text_capabilities


class _Strings(_Names):
    """One file's folded constants (see the module docstring)."""

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
