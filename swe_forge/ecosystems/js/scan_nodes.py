"""The syntax-tree vocabulary the JavaScript/TypeScript scan's parts share.

Node kinds (functions, blocks, scopes, the wrappers an expression is read through), the
scan's limits, and small readers of one node (a name with its escapes decoded, a property
key, a function's returned expressions, an expression handed on). Kept apart from
:mod:`swe_forge.ecosystems.js.scan` so the scopes, resolution and folding modules, and the
scan itself, can share them without importing one another.
"""

from __future__ import annotations

import re
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.scanning import Parents, decode_escapes

_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "generator_function_declaration",
        "generator_function",
        "arrow_function",
        "method_definition",
        "function_signature",
        "method_signature",
        "abstract_method_signature",
    }
)
_BLOCKS = frozenset(
    {
        "program",
        "statement_block",
        "for_statement",
        "for_in_statement",
        "switch_body",
        "catch_clause",
        "class_body",
        "class_static_block",
    }
)
#: Nodes names are declared in (a lookup walks these only).
_SCOPES = _BLOCKS | _FUNCTIONS | {"class"}
#: Functions whose ``this`` is the caller's (the global object when called plainly).
_PLAIN_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "generator_function_declaration",
        "generator_function",
    }
)
_TRANSPARENT = frozenset(
    {
        "parenthesized_expression",
        "await_expression",
        "as_expression",
        "type_assertion",
        "non_null_expression",
        "satisfies_expression",
    }
)
_MAX_DEPTH = 100
_MAX_SEGMENTS = 12
_MAX_TEXT = 1 << 16


def _name(node: Any) -> str:
    """An identifier's name, with its Unicode escapes decoded (``\\u0065val`` is eval)."""
    text = syntax.text(node)
    return decode_escapes(text) if "\\" in text else text


def _key(node: Any) -> str:
    if node is None:
        return "*"
    if node.type in ("property_identifier", "identifier"):
        return _name(node)
    if node.type == "string":
        return decode_escapes(syntax.text(node)[1:-1])
    return "*"


def _extend(
    given: tuple[Any, tuple[str, ...]] | None, key: str
) -> tuple[Any, tuple[str, ...]] | None:
    return (given[0], (*given[1], key)) if given is not None else None


def _strict(root: Any) -> bool:
    """Is a script strict (a "use strict" directive, or an ES module)?"""
    for child in root.named_children:
        if child.type in ("import_statement", "export_statement"):
            return True
    first = next((c for c in root.named_children if c.type != "comment"), None)
    return (
        first is not None
        and first.type == "expression_statement"
        and bool(re.match(r"""^['"]use strict['"]""", syntax.text(first)))
    )


def _inner_function(node: Any) -> Any:
    while node is not None and node.type == "parenthesized_expression":
        node = _inner(node)
    if node is not None and node.type in ("function_expression", "function", "arrow_function"):
        return node
    return None


def _returned(fn: Any) -> list[Any]:
    """The expressions a function returns (an arrow's body; its own return statements)."""
    body = fn.child_by_field_name("body")
    if body is None:
        return []
    if body.type != "statement_block":
        return [body]
    out = []
    stack = list(body.named_children)
    while stack:
        node = stack.pop()
        if node.type in _FUNCTIONS or node.type in ("class", "class_declaration"):
            continue
        if node.type == "return_statement" and node.named_children:
            out.append(node.named_children[0])
        stack.extend(node.named_children)
    return out


def _inner(node: Any) -> Any:
    """The expression inside a parenthesis, an await or a TypeScript assertion."""
    children = [c for c in node.named_children if c.type != "comment"]
    if not children:
        return None
    return children[-1] if node.type == "type_assertion" else children[0]


def _escapes(up: Parents, node: Any) -> bool:
    """Is an expression handed on where the scan no longer follows it?"""
    parent = up.parent(node)
    if parent is None or not node.is_named:
        return False
    kind = parent.type
    if kind in ("arguments", "array", "spread_element", "return_statement", "yield_expression"):
        return True
    if kind in ("pair", "export_statement"):
        return bool(parent.child_by_field_name("value") == node)
    if kind in ("assignment_expression",):
        left = parent.child_by_field_name("left")
        return (
            parent.child_by_field_name("right") == node
            and left is not None
            and left.type != "identifier"
        )
    return False
