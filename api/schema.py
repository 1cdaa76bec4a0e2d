"""What the OpenAPI document says about this server: the API's version, its error responses, its size limits
in the request schemas, its description."""

from __future__ import annotations

from typing import Any

from faithsieve.api.errors import OPENAPI_STATUSES
from faithsieve.api.models import ErrorBody
from faithsieve.api.settings import ServiceSettings

__all__ = ["API_VERSION", "ERROR_RESPONSES", "describe", "document_limits"]

API_VERSION = "1"
"""The API's version (the document's ``info.version``; ``GET /version`` also has the package's)."""

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description} for status, description in OPENAPI_STATUSES.items()}
"""The error responses the API's routes document: the error body, for each status of the error table that
has an OpenAPI description."""


def document_limits(schema: dict[str, Any], s: ServiceSettings) -> dict[str, Any]:
    """Write this server's size limits into the request schemas, so that schema-valid input is
    what the server accepts (the total of ``max_proof_chars`` aside, which JSON Schema cannot say)."""
    comps = schema.get("components", {}).get("schemas", {})
    req = comps.get("LocalizeRequest")
    if req is not None:
        props = req["properties"]
        props["problem"]["maxLength"] = s.max_proof_chars
        for branch in props["steps"]["anyOf"]:
            if branch.get("type") == "array":
                branch.update(minItems=1, maxItems=s.max_steps)
                branch["items"]["maxLength"] = s.max_step_chars
        # exactly one of `steps` and `proof` (both is a 422; the other one absent or null, as the
        # server reads null): two titled variants, so documentation tools offer "steps" or "proof",
        # never one model twice or a sample holding both
        req.pop("anyOf", None)
        req["oneOf"] = [
            {"title": "steps (a list)", "required": ["steps"],
             "not": {"required": ["proof"], "properties": {"proof": {"type": "string"}}},
             "properties": {"steps": {"type": "array"}}},
            {"title": "proof (one text)", "required": ["proof"],
             "not": {"required": ["steps"], "properties": {"steps": {"type": "array"}}},
             # a character that is not whitespace for the server (Python counts \x1c-\x1f and \x85 as
             # whitespace; JSON Schema's \S does not)
             "properties": {"proof": {"type": "string", "pattern": "[^\\s\\x1c-\\x1f\\x85]",
                                      "maxLength": s.max_proof_chars}}},
        ]
    body = schema.get("paths", {}).get("/localize", {}).get("post", {}).get("requestBody", {})
    media = body.get("content", {}).get("application/json")
    if media is not None:
        media["examples"] = {
            "steps": {"summary": "steps as a list", "value": {
                "problem": "Solve 5x - 7 = 18.", "steps": ["Add 7: 5x = 25.", "Divide by 5: x = 5."]}},
            "proof": {"summary": "the proof as one text", "value": {
                "problem": "Solve 5x - 7 = 18.", "proof": "Step 1: Add 7: 5x = 25.\nStep 2: Divide by 5: x = 5."}},
        }
    batch = comps.get("BatchRequest")
    if batch is not None:
        batch["properties"]["items"].update(minItems=1, maxItems=s.batch_limit)
    reward = comps.get("RewardRequest")
    if reward is not None:
        # equal lengths of query/prompts/labels are checked by the server (422); JSON Schema cannot say it
        reward["properties"]["query"].update(maxItems=s.batch_limit)
    return schema


def describe(s: ServiceSettings) -> str:
    return (
        "Send a problem and its proof (`steps` as a list, or `proof` as one text); get `correct` or the "
        "first erroneous step (1-based) with the evidence behind it.\n\n"
        f"Limits on this server: body ≤ {s.max_body_bytes} bytes (batch ≤ {s.max_batch_body_bytes}); "
        f"≤ {s.max_steps} steps of ≤ {s.max_step_chars} characters, ≤ {s.max_proof_chars} characters in all; "
        f"≤ {s.batch_limit} items per batch; checking budget {s.proof_time_limit_s:g} s per proof, "
        f"hard limit {s.request_time_limit_s:g} s per request; at most {s.max_pending} proofs admitted at once "
        "(429 beyond). Every error answers `{\"error\": {\"code\", \"message\", \"detail\"}}`. See `GET /limits`."
    )
