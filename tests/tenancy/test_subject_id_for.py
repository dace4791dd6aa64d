import pytest

from apps.tenancy.exceptions import SubjectUnresolvable
from apps.tenancy.models import ApiKey, ApiKeyRole
from apps.tenancy.scope import subject_id_for


def test_agent_key_with_agent_id_is_that_agent():
    key = ApiKey(role=ApiKeyRole.AGENT, agent_id="  scout  ")

    assert subject_id_for(key) == "scout"


@pytest.mark.parametrize(
    ("_case", "role", "agent_id"),
    [
        ("agent_blank_id", ApiKeyRole.AGENT, "   "),
        ("user", ApiKeyRole.USER, ""),
        ("orchestrator", ApiKeyRole.ORCHESTRATOR, ""),
        ("superadmin", ApiKeyRole.SUPERADMIN, ""),
    ],
)
def test_other_keys_are_their_own_id(_case, role, agent_id):
    key = ApiKey(role=role, agent_id=agent_id)

    assert subject_id_for(key) == str(key.id)


def test_missing_key_is_unresolvable():
    with pytest.raises(SubjectUnresolvable) as excinfo:
        subject_id_for(None)

    assert excinfo.value.code == "subject_id_unresolvable"
    assert excinfo.value.http_status == 422


def test_key_without_id_is_unresolvable():
    key = ApiKey(role=ApiKeyRole.USER)
    key.id = None

    with pytest.raises(SubjectUnresolvable):
        subject_id_for(key)
