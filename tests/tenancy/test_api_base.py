import pytest
from rest_framework.request import Request
from rest_framework.response import Response
from typing_extensions import override

from apps.tenancy.api_base import RECALL, TenantApi
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import tenant_halt

pytestmark = pytest.mark.urls("tests.tenancy.probe_urls")


def test_subclass_may_not_override_scope_resolution():
    with pytest.raises(TypeError, match=r"may not override TenantApi\.resolve_scope"):

        class Sneaky(TenantApi):
            @override
            def resolve_scope(self, request: Request) -> Response:  # type: ignore[override]
                raise AssertionError


def test_subclass_may_not_skip_its_rate_limit():
    with pytest.raises(TypeError, match=r"may not override TenantApi\.rate_charge"):

        class Sneaky(TenantApi):
            @override
            def rate_charge(self, request: Request) -> None:
                return None


def test_a_write_may_not_be_exempt_from_rate_limits():
    with pytest.raises(TypeError, match=r"Sneaky: only a GET may be exempt from rate limits"):

        class Sneaky(TenantApi):
            rate_limit_exempt = {"DELETE": "deletes are cheap"}


def test_a_method_is_either_charged_or_exempt():
    with pytest.raises(TypeError, match=r"Sneaky: \['GET'\] charged and exempt"):

        class Sneaky(TenantApi):
            rate_limits = {"GET": RECALL}
            rate_limit_exempt = {"GET": "a plain read"}


def test_halted_tenant_refuses_agent_writes_with_423(agent, tenant):
    tenant_halt(tenant=tenant, reason="incident")

    response = agent.post("/probe/write", {"query": "x"})

    assert response.status_code == 423
    assert response.json()["error"]["code"] == "tenant_halted"


def test_halt_does_not_block_agent_read_posts(agent, tenant):
    tenant_halt(tenant=tenant)

    response = agent.post("/probe/read-post", {})

    assert response.status_code == 200


def test_halt_does_not_block_non_agent_writes(user, tenant):
    tenant_halt(tenant=tenant)

    response = user.post("/probe/write", {"query": "x"})

    assert response.status_code == 200


def test_halt_does_not_block_superadmin_oversight(superadmin, tenant):
    tenant_halt(tenant=tenant)

    response = superadmin.post("/probe/write", {"query": "x"})

    assert response.status_code == 200


@pytest.mark.parametrize(
    ("_case", "role", "status"),
    [
        ("agent", ApiKeyRole.AGENT, 403),
        ("user", ApiKeyRole.USER, 200),
        ("orchestrator", ApiKeyRole.ORCHESTRATOR, 403),
    ],
)
def test_role_allow_list(make_caller, tenant, _case, role, status):
    caller = make_caller(tenant, role)

    response = caller.get("/probe/user-only")

    assert response.status_code == status
    if status == 403:
        assert response.json()["error"]["code"] == "permission_denied"


def test_generic_validation_error_is_422_with_fields(agent):
    response = agent.post("/probe/write", {"limit": 99})

    body = response.json()
    assert response.status_code == 422
    assert body["error"]["code"] == "validation_error"
    assert set(body["error"]["details"]["fields"]) == {"query", "limit"}


def test_specific_field_code_becomes_the_error_code(agent):
    response = agent.post("/probe/write", {"query": "bad"})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_query"


def test_malformed_json_is_400_invalid_json(agent):
    response = agent.client.post("/probe/write", "{not json", content_type="application/json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"


def test_wrong_content_type_is_415(agent):
    response = agent.client.post("/probe/write", "query=x", content_type="text/plain")

    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


def test_method_not_allowed_is_405_envelope(agent):
    response = agent.delete("/probe/write")

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_application_error_keeps_its_code_and_details(agent):
    response = agent.get("/probe/conflict")

    assert response.status_code == 409
    assert response.json() == {
        "error": {"code": "thing_taken", "message": "taken", "details": {"id": 1}}
    }


def test_unhandled_error_is_500_envelope_with_error_id(agent):
    response = agent.get("/probe/crash")

    body = response.json()
    assert response.status_code == 500
    assert body["error"]["code"] == "internal_error"
    assert len(body["error"]["details"]["error_id"]) == 32
    assert "boom" not in response.content.decode()


def test_unknown_url_is_404_envelope(agent):
    response = agent.get("/no/such/path")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
