from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_revoke

WHOAMI = "/api/v1/tenancy/whoami"


def test_anonymous_request_is_401_not_authenticated(anonymous, db):
    response = anonymous.get(WHOAMI)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize(
    ("_case", "header"),
    [
        ("wrong_scheme", "Token abc"),
        ("scheme_only", "Bearer"),
        ("two_tokens", "Bearer abc def"),
        ("unknown_key", "Bearer eng_000000000000_nope"),
        ("not_our_format", "Bearer hello"),
    ],
)
def test_malformed_or_unknown_credentials_are_401(anonymous, db, _case, header):
    response = anonymous.get(WHOAMI, HTTP_AUTHORIZATION=header)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_revoked_key_is_401(agent):
    api_key_revoke(api_key=agent.key)

    response = agent.get(WHOAMI)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_wrong_secret_with_a_real_prefix_is_401(agent, anonymous):
    forged = f"eng_{agent.key.prefix}_forged-secret"

    response = anonymous.get(WHOAMI, HTTP_AUTHORIZATION=f"Bearer {forged}")

    assert response.status_code == 401


@pytest.mark.parametrize("_case", [ApiKeyRole.USER, ApiKeyRole.ORCHESTRATOR])
def test_user_and_orchestrator_act_as_their_own_key(make_caller, tenant, _case):
    caller = make_caller(tenant, _case)

    body = caller.get(WHOAMI).json()["data"]

    assert body["role"] == _case
    assert body["subject_id"] == str(caller.key.id)
    assert body["tenant_slug"] == tenant.slug
    assert body["impersonating"] is False


def test_agent_keys_with_one_agent_id_share_a_subject(make_caller, tenant):
    first = make_caller(tenant, ApiKeyRole.AGENT, agent_id="planner")
    rotated = make_caller(tenant, ApiKeyRole.AGENT, agent_id="planner")

    assert first.get(WHOAMI).json()["data"]["subject_id"] == "planner"
    assert rotated.get(WHOAMI).json()["data"]["subject_id"] == "planner"


def test_agent_key_without_agent_id_acts_as_itself(make_caller, tenant):
    caller = make_caller(tenant, ApiKeyRole.AGENT)

    assert caller.get(WHOAMI).json()["data"]["subject_id"] == str(caller.key.id)


def test_superadmin_without_impersonation_header_is_422(make_caller, db):
    caller = make_caller(None, ApiKeyRole.SUPERADMIN)

    response = caller.get(WHOAMI)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "impersonation_tenant_required"


def test_superadmin_impersonating_unknown_tenant_is_404(make_caller, db):
    caller = make_caller(None, ApiKeyRole.SUPERADMIN)

    response = caller.get(WHOAMI, HTTP_X_IMPERSONATE_TENANT="no-such-tenant")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_superadmin_impersonates_the_named_tenant(superadmin, tenant):
    body = superadmin.get(WHOAMI).json()["data"]

    assert body["tenant_slug"] == tenant.slug
    assert body["impersonating"] is True
    assert body["role"] == "superadmin"


def test_impersonation_header_from_a_tenant_key_is_ignored(agent, other_tenant, tenant):
    response = agent.get(WHOAMI, HTTP_X_IMPERSONATE_TENANT=other_tenant.slug)

    assert response.json()["data"]["tenant_slug"] == tenant.slug


def test_authentication_records_last_use(agent):
    assert agent.key.last_used_at is None

    agent.get(WHOAMI)

    agent.key.refresh_from_db()
    assert agent.key.last_used_at is not None


# ----------------------------------------------------------------------- failed-auth throttle

UNKNOWN_KEY = "Bearer eng_000000000000_not-a-real-key"
SOURCE = "203.0.113.7"
OTHER_SOURCE = "198.51.100.20"
DAY = 86_400


@pytest.fixture
def auth_failure_limit(settings):
    settings.AUTH_FAILURE_LIMIT = 3
    # Windows are fixed; a day-long one keeps a window boundary out of these tests.
    settings.AUTH_FAILURE_WINDOW_SECONDS = DAY


def _fail(client, times: int, source: str = SOURCE, header: str = UNKNOWN_KEY) -> list[int]:
    return [
        client.get(WHOAMI, HTTP_AUTHORIZATION=header, REMOTE_ADDR=source).status_code
        for _ in range(times)
    ]


def _queries_of(request_call) -> tuple[Any, int]:
    with CaptureQueriesContext(connection) as queries:
        response = request_call()
    return response, len(queries)


def test_failed_authentications_past_the_bound_are_429_without_a_key_lookup(
    anonymous, db, auth_failure_limit
):
    failed, failed_queries = _queries_of(
        lambda: anonymous.get(WHOAMI, HTTP_AUTHORIZATION=UNKNOWN_KEY, REMOTE_ADDR=SOURCE)
    )
    statuses = _fail(anonymous, 2)

    throttled, throttled_queries = _queries_of(
        lambda: anonymous.get(WHOAMI, HTTP_AUTHORIZATION=UNKNOWN_KEY, REMOTE_ADDR=SOURCE)
    )

    assert (failed.status_code, failed_queries) == (401, 1)  # the key lookup
    assert statuses == [401, 401]
    assert (throttled.status_code, throttled_queries) == (429, 0)
    retry_after = int(throttled["Retry-After"])
    assert 1 <= retry_after <= DAY + 1
    assert throttled.json() == {
        "error": {
            "code": "authentication_rate_limited",
            "message": "Too many failed authentications from this address. "
            f"Expected available in {retry_after} seconds.",
            "details": {"retry_after_seconds": retry_after},
        }
    }


def test_a_throttled_address_is_refused_before_even_a_valid_key_is_looked_up(
    agent, anonymous, auth_failure_limit
):
    assert _fail(anonymous, 3) == [401, 401, 401]

    response, queries = _queries_of(lambda: agent.get(WHOAMI, REMOTE_ADDR=SOURCE))

    assert (response.status_code, queries) == (429, 0)
    assert response.json()["error"]["code"] == "authentication_rate_limited"
    agent.key.refresh_from_db()
    assert agent.key.last_used_at is None


def test_another_address_is_unaffected(agent, anonymous, auth_failure_limit):
    assert _fail(anonymous, 4) == [401, 401, 401, 429]

    valid = agent.get(WHOAMI, REMOTE_ADDR=OTHER_SOURCE)
    invalid = _fail(anonymous, 1, source=OTHER_SOURCE)

    assert valid.status_code == 200
    assert valid.json()["data"]["subject_id"] == "agent-a"
    assert invalid == [401]


def test_successful_authentications_do_not_count(agent, anonymous, auth_failure_limit):
    successes = [agent.get(WHOAMI, REMOTE_ADDR=SOURCE).status_code for _ in range(5)]

    assert successes == [200] * 5
    assert _fail(anonymous, 4) == [401, 401, 401, 429]


def test_malformed_headers_count_as_failures(anonymous, db, auth_failure_limit):
    assert _fail(anonymous, 4, header="Bearer abc def") == [401, 401, 401, 429]


def test_requests_without_a_key_are_neither_counted_nor_refused(anonymous, db, auth_failure_limit):
    bare = [anonymous.get(WHOAMI, REMOTE_ADDR=SOURCE).status_code for _ in range(5)]
    assert _fail(anonymous, 4) == [401, 401, 401, 429]

    response = anonymous.get(WHOAMI, REMOTE_ADDR=SOURCE)

    assert bare == [401] * 5
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_behind_a_proxy_the_address_it_forwarded_is_the_source(
    agent, anonymous, settings, auth_failure_limit
):
    settings.TRUSTED_PROXY_COUNT = 1
    balancer = {"REMOTE_ADDR": "10.0.0.2"}
    for _ in range(3):
        anonymous.get(
            WHOAMI, HTTP_AUTHORIZATION=UNKNOWN_KEY, HTTP_X_FORWARDED_FOR=SOURCE, **balancer
        )

    # A client cannot shed its address by writing another one in front of it.
    spoofed = anonymous.get(
        WHOAMI,
        HTTP_AUTHORIZATION=UNKNOWN_KEY,
        HTTP_X_FORWARDED_FOR=f"192.0.2.1, {SOURCE}",
        **balancer,
    )
    other_client = agent.get(WHOAMI, HTTP_X_FORWARDED_FOR=OTHER_SOURCE, **balancer)

    assert spoofed.status_code == 429
    assert other_client.status_code == 200
