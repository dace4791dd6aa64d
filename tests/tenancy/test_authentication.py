import pytest

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
