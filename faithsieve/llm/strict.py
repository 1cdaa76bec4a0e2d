"""OpenAI's strict ``json_schema`` structured outputs: the rules, a validator, and a transform (pure).

The rules, as OpenAI documents them for ``response_format: {"type": "json_schema", "json_schema":
{"name", "schema", "strict": true}}`` (Structured Outputs, "Supported schemas"):

- the root is an object (not ``anyOf``);
- every object lists **all** its properties in ``required`` and sets ``additionalProperties: false``;
- types are ``string``, ``number``, ``integer``, ``boolean``, ``object``, ``array``, ``null``, plus
  ``enum``/``const``, ``anyOf`` and ``$ref`` into ``$defs`` (an optional field is a union with null);
- keywords outside that set are refused: ``default``, and (in the conservative list this module
  keeps) ``minLength``/``maxLength``/``pattern``/``format``, ``minimum``/``maximum``/``multipleOf``,
  ``minItems``/``maxItems``/``uniqueItems``/``contains``, ``patternProperties``/``propertyNames``/
  ``minProperties``/``maxProperties``, ``allOf``/``oneOf``/``not``, ``if``/``then``/``else``;
- at most ``MAX_DEPTH`` levels of nested objects, ``MAX_PROPERTIES`` properties in all, ``MAX_ENUM`` enum values.

``strict_violations(schema)`` lists what breaks those rules. ``strict_schema(schema)`` turns a
pydantic schema into one that passes: refused keywords dropped (our pydantic validation still
enforces every bound on the answer), every property required, a property that was optional made
nullable, ``additionalProperties: false`` everywhere. ``drop_optional_nulls`` undoes the nullable
trick on an answer, so a ``null`` the model had to write for an optional field becomes "absent"
again and the field's default applies.
"""

from __future__ import annotations

from typing import Any

ALLOWED_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "const",
                              "anyOf", "$ref", "$defs", "description", "title"})
"""Every keyword a strict schema may use."""
MAX_DEPTH = 5
MAX_PROPERTIES = 100
MAX_ENUM = 500
_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


def strict_violations(schema: Any) -> list[str]:
    """What in ``schema`` breaks OpenAI's strict-mode rules (empty: it passes). Pure."""
    out: list[str] = []
    if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
        out.append("root: must be an object schema (type object, not anyOf)")
    counter = [0]
    _check(schema, "root", 0, out, counter)
    for name, sub in (schema.get("$defs") or {}).items() if isinstance(schema, dict) else ():
        _check(sub, f"$defs.{name}", 0, out, counter)
    if counter[0] > MAX_PROPERTIES:
        out.append(f"{counter[0]} properties in all (at most {MAX_PROPERTIES})")
    return out


def _check(node: Any, path: str, depth: int, out: list[str], counter: list[int]) -> None:
    if not isinstance(node, dict):
        out.append(f"{path}: not a schema object")
        return
    for key in node:
        if key not in ALLOWED_KEYWORDS:
            out.append(f"{path}: keyword {key!r} not supported in strict mode")
    types = node.get("type")
    for t in types if isinstance(types, list) else [types] if types is not None else []:
        if t not in _TYPES:
            out.append(f"{path}: type {t!r} not supported")
    if "enum" in node and len(node["enum"]) > MAX_ENUM:
        out.append(f"{path}: {len(node['enum'])} enum values (at most {MAX_ENUM})")
    props = node.get("properties")
    if types == "object" or props is not None:
        if depth >= MAX_DEPTH:
            out.append(f"{path}: objects nested deeper than {MAX_DEPTH} levels")
        props = props or {}
        counter[0] += len(props)
        if node.get("additionalProperties") is not False:
            out.append(f"{path}: additionalProperties must be false")
        missing = sorted(set(props) - set(node.get("required") or []))
        if missing:
            out.append(f"{path}: properties not required: {', '.join(missing)}")
        for name, sub in props.items():
            _check(sub, f"{path}.{name}", depth + 1, out, counter)
    if "items" in node:
        _check(node["items"], f"{path}[]", depth + 1, out, counter)
    for i, sub in enumerate(node.get("anyOf") or []):
        _check(sub, f"{path}|{i}", depth, out, counter)


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
    out: dict[str, Any] = {k: v for k, v in node.items() if k in ALLOWED_KEYWORDS and k != "$defs"}
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


__all__ = ["ALLOWED_KEYWORDS", "drop_optional_nulls", "strict_schema", "strict_violations"]
