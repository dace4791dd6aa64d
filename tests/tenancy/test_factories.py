"""The API key factory issues keys that authenticate like the service's."""

from __future__ import annotations

from rest_framework.test import APIClient

from apps.tenancy.models import ApiKeyRole
from apps.tenancy.scope import subject_id_for
from apps.tenancy.selectors import api_key_authenticate
from tests.tenancy.factories import ApiKeyFactory


def test_an_issued_key_authenticates_as_its_row(tenant):
    issued = ApiKeyFactory.issue(tenant=tenant, agent_id="agent-a")

    issued.api_key.full_clean()
    assert api_key_authenticate(raw_key=issued.raw_key) == issued.api_key
    assert subject_id_for(issued.api_key) == "agent-a"


def test_an_issued_key_is_accepted_over_http(tenant):
    issued = ApiKeyFactory.issue(tenant=tenant)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.raw_key}")

    assert client.get("/api/v1/memory").status_code == 200
    assert APIClient().get("/api/v1/memory").status_code == 401


def test_roles_and_the_superadmin_trait_satisfy_the_model_checks(tenant):
    agents = ApiKeyFactory.create_batch(2, tenant=tenant)
    user = ApiKeyFactory.create(tenant=tenant, role=ApiKeyRole.USER)
    superadmin = ApiKeyFactory.create(superadmin=True)

    for key in [*agents, user, superadmin]:
        key.full_clean()
    assert agents[0].agent_id != agents[1].agent_id
    assert user.agent_id == ""
    assert (superadmin.role, superadmin.tenant) == (ApiKeyRole.SUPERADMIN, None)


def test_a_wrong_secret_with_a_real_prefix_does_not_authenticate(tenant):
    issued = ApiKeyFactory.issue(tenant=tenant)
    forged = issued.raw_key.rsplit("_", 1)[0] + "_not-the-secret"

    assert api_key_authenticate(raw_key=forged) is None
