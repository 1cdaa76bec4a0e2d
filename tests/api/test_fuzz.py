"""Property-based fuzzing of the OpenAPI schema (schemathesis over hypothesis), against a live
server on the real pipeline: schema-valid requests (positive) and schema-violating ones
(negative) for every operation. Checks: never a 5xx, documented status codes and content types,
responses that match their schemas, invalid data rejected, valid data accepted.

Marked ``fuzz`` (not in the default run): ``pytest -m fuzz tests/api/test_fuzz.py``.
``FAITHSIEVE_FUZZ_EXAMPLES`` sets the examples per operation and mode (default 100)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator

import pytest

schemathesis = pytest.importorskip("schemathesis")
from faithsieve.api.app import create_app  # noqa: E402
from faithsieve.api.settings import ServiceSettings  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.generation.modes import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    negative_data_rejection,
    positive_data_acceptance,
)

pytestmark = pytest.mark.fuzz

EXAMPLES = int(os.environ.get("FAITHSIEVE_FUZZ_EXAMPLES", "100"))
# Small size limits, written into the schema like any others, so that negative data can cross them.
SERVER_SETTINGS = {"workers": 1, "max_pending": 64, "batch_max_items": 4, "max_steps": 12, "max_step_chars": 300,
                   "max_proof_chars": 2_000, "max_body_bytes": 64_000, "max_batch_body_bytes": 256_000}
SCHEMA = schemathesis.openapi.from_dict(create_app(ServiceSettings(**SERVER_SETTINGS)).openapi())
OPERATIONS = sorted(f"{method.upper()} {path}" for path, item in SCHEMA.raw_schema["paths"].items() for method in item)
STATUS: Counter[int] = Counter()


@pytest.fixture(scope="module")
def base_url(make_server_module) -> Iterator[str]:
    yield make_server_module


# Negative data needs something to make invalid: only the POST routes take input.
CASES = [(op, GenerationMode.POSITIVE) for op in OPERATIONS] + \
        [(op, GenerationMode.NEGATIVE) for op in OPERATIONS if op.startswith("POST ")]


@pytest.mark.parametrize(("operation", "mode"), CASES, ids=[f"{o}-{m.value}" for o, m in CASES])
def test_schema_fuzz(base_url, operation, mode):
    method, path = operation.split(" ", 1)
    strategy = SCHEMA[path][method].as_strategy(generation_mode=mode)

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def run(case) -> None:
        if mode is GenerationMode.POSITIVE:
            # Schema-valid input is accepted, except that problem plus proof may together exceed
            # max_proof_chars (each part is within its own maxLength): JSON Schema cannot say that.
            response = case.call_and_validate(base_url=base_url, timeout=30, excluded_checks=[positive_data_acceptance])
            if response.status_code == 413:
                assert response.json()["error"]["detail"]["field"] == "proof", response.text[:500]
            elif path == "/get_reward" and response.status_code == 422:
                # prompts/labels whose length differs from query's: JSON Schema cannot say "same length"
                assert response.json()["error"]["detail"]["field"] in ("prompts", "labels"), response.text[:500]
            elif path == "/localize/batch" and response.status_code == 200:
                assert all(x["status"] == 200 or (x["status"] == 413 and x["error"]["detail"]["field"] == "proof")
                           for x in response.json()["results"]), response.text[:1000]
            else:
                assert 200 <= response.status_code < 300, response.text[:500]
        else:
            # schemathesis' own rejection check does not count 413 as a rejection; ours does, and
            # a batch answers 200 with a per-item error for each invalid item.
            response = case.call_and_validate(base_url=base_url, timeout=30, excluded_checks=[negative_data_rejection])
            if path == "/localize/batch" and response.status_code == 200:
                assert all(x["status"] == 200 or 400 <= x["status"] < 500 for x in response.json()["results"])
            else:
                assert 400 <= response.status_code < 500, response.text[:500]
        STATUS[response.status_code] += 1
        assert response.status_code < 500

    run()


def test_fuzz_summary():
    print(f"fuzz status counts: {dict(sorted(STATUS.items()))}")
    assert not [s for s in STATUS if s >= 500]
