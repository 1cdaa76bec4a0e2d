"""OpenAI's strict ``json_schema`` structured outputs: the rules, a validator, and a transform (pure).

The rules, as OpenAI documents them for ``response_format: {"type": "json_schema", "json_schema":
{"name", "schema", "strict": true}}`` (Structured Outputs, "Supported schemas"; checked against the guide
in 2026, see ``SOURCES``):

- the root is an object (not ``anyOf``);
- every object lists **all** its properties in ``required`` and sets ``additionalProperties: false``;
- types are ``string``, ``number``, ``integer``, ``boolean``, ``object``, ``array``, ``null``, plus
  ``enum``/``const``, ``anyOf`` and ``$ref`` into ``$defs`` (an optional field is a union with null);
- a few type-specific constraints are supported (``TYPED_KEYWORDS``): ``pattern`` and ``format`` (one of
  ``FORMATS``) on strings, ``multipleOf``/``maximum``/``exclusiveMaximum``/``minimum``/``exclusiveMinimum`` on
  numbers, ``minItems``/``maxItems`` on arrays;
- every other keyword is refused: ``default``, ``minLength``/``maxLength``, ``uniqueItems``/``contains``,
  ``patternProperties``/``propertyNames``/``minProperties``/``maxProperties``, the composition keywords
  ``allOf``/``oneOf``/``not``/``if``/``then``/``else``/``dependentRequired``/``dependentSchemas``, ...;
- at most ``MAX_PROPERTIES`` object properties in all and ``MAX_SCHEMA_NESTING`` levels of nested objects;
  at most ``MAX_ENUM_VALUES`` enum values in all; at most ``MAX_STRING_CHARS`` characters of property names, definition
  names, enum and const values in all; an enum of more than ``LARGE_ENUM`` string values at most
  ``MAX_LARGE_ENUM_CHARS`` characters.

``strict_violations(schema)`` lists what breaks those rules. ``strict_schema(schema)`` turns a pydantic schema
into one that passes and is kept to the structural keywords (``KEPT_KEYWORDS``): the type-specific
constraints OpenAI would accept are dropped too, because the same schema goes to OpenAI-compatible servers
whose guided decoding supports them unevenly (a ``pattern`` is a regular expression in Python's dialect, not
ECMA's), and our pydantic validation enforces every bound on the answer anyway. Every property is made
required, a property that was optional nullable, ``additionalProperties: false`` set everywhere.
``drop_optional_nulls`` undoes the nullable trick on an answer, so a ``null`` the model had to write for an
optional field becomes "absent" again and the field's default applies.
"""

from __future__ import annotations

from typing import Any

SOURCES = (
    # the guide's "Supported schemas" section (supported types, supported properties, the limits, the keywords
    # not supported), as quoted in pydantic/pydantic-ai#2420 (2025-08-04) and summarised, with the current
    # limits, in the JSON Schema profile of OpenAI Structured Outputs (February 2026 baseline)
    "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas",
    "https://github.com/pydantic/pydantic-ai/pull/2420",
    "https://jsonschemaprofiles.unitvectorylabs.com/schemas/openai",
)
"""Where the rules below were read (strict mode is OpenAI's; re-check them here when it changes)."""

KEPT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "const",
                           "anyOf", "$ref", "$defs", "description", "title"})
"""The structural keywords: any schema node may use them, and ``strict_schema`` keeps only these."""
TYPED_KEYWORDS: dict[str, frozenset[str]] = {
    "string": frozenset({"pattern", "format"}),
    "number": frozenset({"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"}),
    "integer": frozenset({"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"}),
    "array": frozenset({"minItems", "maxItems"}),
}
"""The type-specific constraints strict mode supports, by the type they constrain."""
ALLOWED_KEYWORDS = KEPT_KEYWORDS | frozenset().union(*TYPED_KEYWORDS.values())
"""Every keyword a strict schema may use (a typed one only on a node of its type)."""
FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
"""The string formats strict mode supports."""
MAX_SCHEMA_NESTING = 10
"""Most levels of objects nested in one schema."""
MAX_PROPERTIES = 5000
MAX_ENUM_VALUES = 1000
MAX_STRING_CHARS = 120_000
LARGE_ENUM, MAX_LARGE_ENUM_CHARS = 250, 15_000
_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


class _Totals:
    """What the whole-schema limits count, over the root and its ``$defs``."""

    def __init__(self) -> None:
        self.properties = 0
        self.enum_values = 0
        self.chars = 0


def strict_violations(schema: Any) -> list[str]:
    """What in ``schema`` breaks OpenAI's strict-mode rules (empty: it passes). Pure."""
    out: list[str] = []
    if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
        out.append("root: must be an object schema (type object, not anyOf)")
    totals = _Totals()
    _check(schema, "root", 0, out, totals)
    for name, sub in (schema.get("$defs") or {}).items() if isinstance(schema, dict) else ():
        totals.chars += len(str(name))
        _check(sub, f"$defs.{name}", 0, out, totals)
    if totals.properties > MAX_PROPERTIES:
        out.append(f"{totals.properties} properties in all (at most {MAX_PROPERTIES})")
    if totals.enum_values > MAX_ENUM_VALUES:
        out.append(f"{totals.enum_values} enum values in all (at most {MAX_ENUM_VALUES})")
    if totals.chars > MAX_STRING_CHARS:
        out.append(f"{totals.chars} characters of names, enum and const values in all (at most {MAX_STRING_CHARS})")
    return out


def _check(node: Any, path: str, depth: int, out: list[str], totals: _Totals) -> None:
    if not isinstance(node, dict):
        out.append(f"{path}: not a schema object")
        return
    _check_keywords(node, path, out)
    _count_values(node, path, out, totals)
    props = node.get("properties")
    if node.get("type") == "object" or props is not None:
        if depth >= MAX_SCHEMA_NESTING:
            out.append(f"{path}: objects nested deeper than {MAX_SCHEMA_NESTING} levels")
        props = props or {}
        totals.properties += len(props)
        totals.chars += sum(len(str(name)) for name in props)
        if node.get("additionalProperties") is not False:
            out.append(f"{path}: additionalProperties must be false")
        missing = sorted(set(props) - set(node.get("required") or []))
        if missing:
            out.append(f"{path}: properties not required: {', '.join(missing)}")
        for name, sub in props.items():
            _check(sub, f"{path}.{name}", depth + 1, out, totals)
    if "items" in node:
        _check(node["items"], f"{path}[]", depth + 1, out, totals)
    for i, sub in enumerate(node.get("anyOf") or []):
        _check(sub, f"{path}|{i}", depth, out, totals)


def _check_keywords(node: dict[str, Any], path: str, out: list[str]) -> None:
    """The node's types, and each keyword: allowed at all, and (a typed one) on a node of its type."""
    types = node.get("type")
    named = types if isinstance(types, list) else [types] if types is not None else []
    for t in named:
        if t not in _TYPES:
            out.append(f"{path}: type {t!r} not supported")
    typed = frozenset().union(*(TYPED_KEYWORDS.get(t, frozenset()) for t in named if isinstance(t, str)))
    for key in node:
        if key not in ALLOWED_KEYWORDS:
            out.append(f"{path}: keyword {key!r} not supported in strict mode")
        elif key not in KEPT_KEYWORDS and key not in typed:
            out.append(f"{path}: keyword {key!r} not supported on type {types!r} in strict mode")
    if "format" in node and node["format"] not in FORMATS:
        out.append(f"{path}: format {node['format']!r} not supported")


def _count_values(node: dict[str, Any], path: str, out: list[str], totals: _Totals) -> None:
    """Enum and const values into the totals; a large enum's own bound."""
    values = node.get("enum")
    if isinstance(values, list):
        totals.enum_values += len(values)
        chars = sum(len(v) for v in values if isinstance(v, str))
        totals.chars += chars
        if len(values) > LARGE_ENUM and chars > MAX_LARGE_ENUM_CHARS:
            out.append(f"{path}: {len(values)} enum values of {chars} characters (at most {MAX_LARGE_ENUM_CHARS} "
                       f"past {LARGE_ENUM} values)")
    if isinstance(node.get("const"), str):
        totals.chars += len(node["const"])


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (a pydantic JSON schema) rewritten to pass ``strict_violations``. Pure."""
    out = _strict(schema)
    assert isinstance(out, dict)
    if "$defs" in schema:
        out["$defs"] = {k: _strict(v) for k, v in schema["$defs"].items()}
    return out


def _strict(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {k: v for k, v in node.items() if k in KEPT_KEYWORDS and k != "$defs"}
    if "items" in out:
        out["items"] = _strict(out["items"])
    if "anyOf" in out:
        out["anyOf"] = [_strict(s) for s in out["anyOf"]]
    if out.get("type") == "object" or "properties" in out:
        props = out.get("properties") or {}
        required = set(node.get("required") or [])
        new_props = {}
        for name, sub in props.items():
            s = _strict(sub)
            new_props[name] = s if name in required else _nullable(s)
        out["type"] = "object"
        out["properties"] = new_props
        out["required"] = list(new_props)
        out["additionalProperties"] = False
    return out


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if "anyOf" in node:
        if any(s.get("type") == "null" for s in node["anyOf"] if isinstance(s, dict)):
            return node
        return {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    if node.get("type") == "null":
        return node
    return {"anyOf": [node, {"type": "null"}]}


def drop_optional_nulls(data: Any, schema: dict[str, Any]) -> Any:
    """``data`` with every ``null`` removed from object keys that ``schema`` (the original, non-strict
    schema) does not require, recursively through properties, items and ``$ref``s. Pure."""
    defs = schema.get("$defs") or {}
    return _drop(data, schema, defs, 0)


def _drop(data: Any, node: Any, defs: dict[str, Any], depth: int) -> Any:
    if depth > 32 or not isinstance(node, dict):
        return data
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _drop(data, defs.get(ref.removeprefix("#/$defs/")), defs, depth + 1)
    for sub in node.get("anyOf") or []:
        if isinstance(sub, dict) and sub.get("type") != "null":
            data = _drop(data, sub, defs, depth + 1)
    if isinstance(data, dict) and isinstance(node.get("properties"), dict):
        required = set(node.get("required") or [])
        return {k: _drop(v, node["properties"].get(k), defs, depth + 1) for k, v in data.items()
                if not (v is None and k not in required)}
    if isinstance(data, list) and isinstance(node.get("items"), dict):
        return [_drop(v, node["items"], defs, depth + 1) for v in data]
    return data


__all__ = ["ALLOWED_KEYWORDS", "FORMATS", "KEPT_KEYWORDS", "SOURCES", "TYPED_KEYWORDS", "drop_optional_nulls",
           "strict_schema", "strict_violations"]
