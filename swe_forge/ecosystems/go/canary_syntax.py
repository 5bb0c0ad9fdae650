"""Syntax helpers of Go's canary writer: node access, literal kinds and string values,
subtest names as ``testing`` reports them, declared values, and what counts as a value
written in the test (literals, composite literals, conversions, arithmetic).

Shared by the reader of a test function (:mod:`swe_forge.ecosystems.go.canary_reader`) and
the writer (:mod:`swe_forge.ecosystems.go.canary`): kept apart from both so that neither
imports the other for them.
"""

from __future__ import annotations

import ast
from typing import Any

from swe_forge.ecosystems import syntax

_KINDS = {
    "interpreted_string_literal": "string",
    "raw_string_literal": "string",
    "int_literal": "int",
    "float_literal": "float",
    "rune_literal": "char",
    "true": "bool",
    "false": "bool",
}
_CONVERSIONS = frozenset(
    [
        "string",
        "byte",
        "rune",
        "bool",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "any",
    ]
)
#: Node types through which a literal stays part of the value it is in.
_VALUE_TYPES = frozenset(
    [
        "composite_literal",
        "literal_value",
        "literal_element",
        "keyed_element",
        "unary_expression",
        "parenthesized_expression",
        "binary_expression",
        "expression_list",
        "type_conversion_expression",
    ]
)


def _text(node: Any) -> str:
    return syntax.text(node) if node is not None else ""


def _field(node: Any, name: str) -> Any:
    return node.child_by_field_name(name)


def _args(call: Any) -> list[Any]:
    args = _field(call, "arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def _call_name(call: Any) -> tuple[str, str]:
    """(operand text, function name) of a call: ``("t", "Errorf")``, ``("", "panic")``."""
    fn = _field(call, "function")
    if fn is None:
        return "", ""
    if fn.type == "selector_expression":
        return _text(_field(fn, "operand")), _text(_field(fn, "field"))
    if fn.type == "identifier":
        return "", _text(fn)
    return "", ""


def go_string_value(node: Any) -> str | None:
    """The value of a Go string literal node (None when it cannot be read)."""
    raw = syntax.text(node)
    if node.type == "raw_string_literal":
        return raw[1:-1].replace("\r", "")
    if node.type != "interpreted_string_literal":
        return None
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def subtest_name(name: str) -> str:
    """A subtest name as ``testing`` reports it (white space becomes ``_``)."""
    return "".join("_" if ch.isspace() else ch for ch in name)


def _unwrap(element: Any) -> Any:
    """The expression of a ``literal_element`` (its only child)."""
    if element is not None and element.type == "literal_element":
        return next(iter(element.named_children), None)
    return element


_DECLARATIONS = frozenset(["short_var_declaration", "var_spec", "const_spec"])


def _declared_value(node: Any, name: str) -> Any:
    """The value ``node`` (a declaration) gives ``name``, or None."""
    if node.type == "short_var_declaration":
        left, right = _field(node, "left"), _field(node, "right")
    elif node.type in ("var_spec", "const_spec"):
        left, right = node, _field(node, "value")
        names = [_text(c) for c in node.children_by_field_name("name")]
        if name in names and right is not None:
            values = list(right.named_children)
            i = names.index(name)
            return values[i] if i < len(values) else None
        return None
    else:
        return None
    if left is None or right is None:
        return None
    names = [_text(c) for c in left.named_children]
    values = list(right.named_children)
    if name in names and len(values) == len(names):
        return values[names.index(name)]
    return None


def _is_conversion(node: Any) -> bool:
    """``[]byte("x")``, ``int64(3)``: a conversion keeps a literal part of a value."""
    if node.type == "argument_list":
        parent = node.parent
        return parent is not None and _is_conversion(parent)
    if node.type != "call_expression":
        return False
    fn = _field(node, "function")
    if fn is None:
        return False
    if fn.type in ("slice_type", "array_type", "map_type", "parenthesized_type"):
        return True
    return fn.type == "identifier" and _text(fn) in _CONVERSIONS


def is_value(node: Any) -> bool:
    """Is an expression a value written in the test (a literal, a composite literal, a
    conversion or arithmetic of values)?"""
    if node.type in _KINDS or node.type in ("composite_literal", "imaginary_literal"):
        return True
    if node.type == "unary_expression":
        operand = _field(node, "operand")
        return operand is not None and is_value(operand)
    if node.type == "parenthesized_expression":
        return all(is_value(c) for c in node.named_children)
    if node.type == "binary_expression":
        op = _text(_field(node, "operator"))
        left, right = _field(node, "left"), _field(node, "right")
        return op in ("+", "-", "*", "/", "%", "<<", ">>", "|", "&", "^") and all(
            n is not None and is_value(n) for n in (left, right)
        )
    if node.type == "type_conversion_expression":  # []byte("x")
        operand = _field(node, "operand")
        return operand is not None and is_value(operand)
    if _is_conversion(node):
        args = _args(node)
        return len(args) == 1 and is_value(args[0])
    return False
