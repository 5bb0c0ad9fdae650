"""The third layer of the JavaScript/TypeScript scan: strings folded, and judged.

:class:`_Folding` folds constant expressions bottom-up (concatenation, template literals,
``String.fromCharCode``, ``atob``, ``Buffer.from(.., 'base64')``, ``split/reverse/join``,
``concat``, case changes, constants) and judges the text of every outermost string
expression (a report's keys, the frameworks' tell-tale names, text capabilities); the string
and array methods of constants it knows follow it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.js.scan_nodes import _MAX_DEPTH, _MAX_TEXT, _TRANSPARENT, _inner, _name
from swe_forge.ecosystems.js.scan_resolve import _Resolution
from swe_forge.ecosystems.js.scan_rules import _FRAMEWORK_TEXT, _REPORT_TEXT, FRAMEWORK, REPORT_TEXT
from swe_forge.ecosystems.scanning import UNPARSABLE, decode_escapes, text_capabilities


class _Folding(_Resolution):
    """Constants folded and strings judged (see the module docstring)."""

    # -------------------------------------------------------------------------- strings
    def _strings(self) -> None:
        """Judge the folded text of every outermost string expression."""
        for node in syntax.walk(self.root):
            if node.type not in _STRINGY:
                continue
            parent = self.up.parent(node)
            if parent is not None and parent.type in _STRINGY and self._text_of(parent):
                continue
            text = self._text_of(node)
            if not text:
                continue
            if _REPORT_TEXT.search(text):
                self.add(REPORT_TEXT, node)
            if _FRAMEWORK_TEXT.match(text):
                self.add(FRAMEWORK, node)
            for cap in text_capabilities(text):
                self.add(cap, node)

    def _text_of(self, node: Any) -> str | None:
        value = self._fold_value(node)
        if isinstance(value, str):
            return value
        return self.partial.get(node.id)

    def _fold_text(self, node: Any) -> str | None:
        """A node's constant string (None when it is not one)."""
        value = self._fold_value(node)
        return value if isinstance(value, str) else None

    def _fold_value(self, node: Any) -> Any:
        """A node's constant value (str, number, list), folded bottom-up without recursion
        on the nesting of the expression."""
        if node is None:
            return None
        if node.id in self.values:
            return self.values[node.id]
        if node.id in self.folding or len(self.folding) > _MAX_DEPTH:
            if len(self.folding) > _MAX_DEPTH:
                self.add(UNPARSABLE, node, "constants chained too deep")
            return None
        self.folding.add(node.id)
        stack: list[tuple[Any, bool]] = [(node, False)]
        while stack:
            current, done = stack.pop()
            if current.id in self.values:
                continue
            if not done:
                stack.append((current, True))
                if current.type in _FOLDABLE:
                    stack.extend(
                        (c, False) for c in current.named_children if c.id not in self.values
                    )
                continue
            self.values[current.id] = self._fold(current)
        self.folding.discard(node.id)
        return self.values.get(node.id)

    def _fold(self, node: Any) -> Any:
        kind = node.type
        if kind == "string":
            return decode_escapes(syntax.text(node)[1:-1])
        if kind == "number":
            return _number(syntax.text(node))
        if kind == "template_string":
            return self._template(node)
        if kind in _TRANSPARENT:
            inner = _inner(node)
            return self.values.get(inner.id) if inner is not None else None
        if kind == "identifier":
            return self._constant(node)
        if kind == "binary_expression":
            return self._concat(node)
        if kind == "array":
            items = [self.values.get(c.id) for c in node.named_children]
            return items if all(i is not None for i in items) else None
        if kind == "call_expression":
            return self._fold_call(node)
        return None

    def _constant(self, ident: Any) -> Any:
        """The value of a name declared once with a constant and never reassigned."""
        binding = self._lookup(ident)
        if binding is None or len(binding.values) != 1 or isinstance(binding.values[0], str):
            return None
        expr, path = binding.values[0]
        if path:
            return None
        return self._fold_value(expr)

    def _template(self, node: Any) -> Any:
        parts: list[str] = []
        known = True
        for child in node.named_children:
            if child.type == "string_fragment":
                parts.append(syntax.text(child))
            elif child.type == "escape_sequence":
                parts.append(decode_escapes(syntax.text(child)))
            elif child.type == "template_substitution":
                expr = child.named_children[0] if child.named_children else None
                value = self._fold_value(expr) if expr is not None else None
                if value is None:
                    known = False
                else:
                    parts.append(_show(value))
        text = "".join(parts)[:_MAX_TEXT]
        if known:
            return text
        self.partial[node.id] = text
        return None

    def _concat(self, node: Any) -> Any:
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or op.type != "+" or left is None or right is None:
            return None
        a, b = self.values.get(left.id), self.values.get(right.id)
        if a is not None and b is not None:
            if isinstance(a, int | float) and isinstance(b, int | float):
                return a + b
            return (_show(a) + _show(b))[:_MAX_TEXT]
        parts = [
            self.partial.get(n.id, _show(v) if v is not None else "")
            for n, v in ((left, a), (right, b))
        ]
        if any(parts):
            self.partial[node.id] = "".join(parts)[:_MAX_TEXT]
        return None

    def _fold_call(self, node: Any) -> Any:
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        if fn is None or args_node is None or args_node.type != "arguments":
            return None
        args = [self._fold_value(a) for a in args_node.named_children]
        if fn.type == "member_expression":
            obj = fn.child_by_field_name("object")
            prop = fn.child_by_field_name("property")
            method = _name(prop) if prop is not None else ""
            receiver = self._fold_value(obj)
            if receiver is not None:
                return _method(receiver, method, args)
            owner = self._resolve(obj)
            if (
                method in ("fromCharCode", "fromCodePoint")
                and "global.String" in owner
                and all(isinstance(a, int | float) for a in args)
            ):
                return "".join(chr(int(a)) for a in args if 0 <= a < 0x110000)[:_MAX_TEXT]
            if method == "toString" and obj is not None and obj.type == "call_expression":
                return self._buffer(obj, args)
            return None
        callee = self._resolve(fn)
        if args and isinstance(args[0], str):
            if "global.atob" in callee:
                return _base64(args[0])
            if callee & {"global.decodeURIComponent", "global.decodeURI", "global.unescape"}:
                return unquote(args[0])
            if "global.String" in callee:
                return args[0]
        return None

    def _buffer(self, made: Any, args: list[Any]) -> Any:
        """``Buffer.from(s, 'base64'|'hex').toString()``."""
        fn = made.child_by_field_name("function")
        if fn is None or "global.Buffer.from" not in self._resolve(fn):
            return None
        inner = [self._fold_value(a) for a in self._args(made)]
        if not inner or not isinstance(inner[0], str):
            return None
        encoding = inner[1] if len(inner) > 1 and isinstance(inner[1], str) else "utf8"
        if encoding == "base64":
            return _base64(inner[0])
        if encoding == "hex":
            try:
                return bytes.fromhex(inner[0]).decode("utf-8", "replace")
            except ValueError:
                return None
        return inner[0]


_STRINGY = frozenset({"string", "template_string", "binary_expression", "call_expression"})
_FOLDABLE = frozenset(
    {
        "binary_expression",
        "template_string",
        "template_substitution",
        "array",
        "call_expression",
        "arguments",
        "member_expression",
        *_TRANSPARENT,
    }
)


def _method(receiver: Any, method: str, args: list[Any]) -> Any:
    """A string or array method of constants."""
    if isinstance(receiver, list):
        if method == "join":
            sep = args[0] if args and isinstance(args[0], str) else ","
            return sep.join(_show(v) for v in receiver)[:_MAX_TEXT]
        if method == "reverse":
            return list(reversed(receiver))
        if method == "concat":
            return receiver + [a for arg in args for a in (arg if isinstance(arg, list) else [arg])]
        return None
    if not isinstance(receiver, str):
        return None
    change = _CHANGES.get(method)
    if change is not None:
        return change(receiver)
    if method == "concat" and all(a is not None for a in args):
        return (receiver + "".join(_show(a) for a in args))[:_MAX_TEXT]
    if method == "split" and args and isinstance(args[0], str):
        return list(receiver) if args[0] == "" else receiver.split(args[0])
    if (
        method in ("replace", "replaceAll")
        and len(args) == 2
        and all(isinstance(a, str) for a in args)
    ):
        count = -1 if method == "replaceAll" else 1
        return receiver.replace(args[0], args[1], count)[:_MAX_TEXT]
    if method == "repeat" and args and isinstance(args[0], int | float):
        count = max(0, min(int(args[0]), _MAX_TEXT // max(1, len(receiver)) + 1))
        return (receiver * count)[:_MAX_TEXT]
    if method in ("slice", "substring") and all(isinstance(a, int | float) for a in args):
        bounds = [int(a) for a in args[:2]]
        return receiver[slice(*bounds)] if bounds else receiver
    return None


_CHANGES: dict[str, Callable[[str], str]] = {
    "toString": str,
    "valueOf": str,
    "toLowerCase": str.lower,
    "toUpperCase": str.upper,
    "trim": str.strip,
    "trimStart": str.lstrip,
    "trimEnd": str.rstrip,
    "normalize": str,
}


def _show(value: Any) -> str:
    """A constant as string concatenation shows it."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(_show(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _number(text: str) -> int | float | None:
    digits = text.replace("_", "").rstrip("n")
    try:
        return int(digits, 0)
    except ValueError:
        try:
            return float(digits)
        except ValueError:
            return None


def _base64(text: str) -> str | None:
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4)).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None
