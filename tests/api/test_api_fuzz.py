"""A property-based fuzz of the OpenAPI document against the live server (schemathesis): whatever a client sends,
no 5xx, and every answer matches the schema the server publishes (status code, content type, headers, body).

Each operation is its own test, driven by schemathesis' strategy for it under Hypothesis (``schemathesis.pytest``'s
own parametrisation does not run on this pytest); the list of operations is checked against the published document,
so an endpoint added later cannot escape the fuzz.
"""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from schemathesis.checks import positive_data_acceptance

from agentmem_nb.api import BackgroundServer

OPERATIONS = [
    ("POST", "/api/chat"),
    ("POST", "/api/chat/stream"),
    ("POST", "/api/conversations"),
    ("GET", "/api/conversations"),
    ("GET", "/api/conversations/{session_id}/messages"),
    ("GET", "/api/health"),
    ("GET", "/api/search"),
    ("GET", "/api/window"),
    ("GET", "/api/memory"),
    ("GET", "/api/memory/history"),
    ("GET", "/api/facts"),
    ("GET", "/api/problems"),
]


@pytest.fixture
def api_schema(server: BackgroundServer) -> schemathesis.BaseSchema:
    """The published OpenAPI document of a live server over a fresh store (offline model)."""
    with httpx.Client(base_url=server.url) as http:  # a conversation for the generated calls to land on
        http.post("/api/chat", json={"user_id": "u", "session_id": "s", "message": "I prefer tea"})
    return schemathesis.openapi.from_url(f"{server.url}/openapi.json")


def test_every_published_operation_is_fuzzed(api_schema: schemathesis.BaseSchema) -> None:
    published = {(op.ok().method.upper(), op.ok().path) for op in api_schema.get_all_operations()}
    assert published == set(OPERATIONS)


@pytest.mark.slow
@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_no_input_gets_a_server_error_or_an_undocumented_answer(api_schema: schemathesis.BaseSchema, method: str,
                                                                path: str) -> None:
    operation = api_schema[path][method]
    calls = 0

    @given(case=operation.as_strategy())
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
              database=None)
    def check(case: schemathesis.Case) -> None:
        nonlocal calls
        calls += 1
        case.call_and_validate(timeout=60, excluded_checks=[positive_data_acceptance])

    check()
    assert calls >= 1
