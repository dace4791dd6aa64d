"""The stop hook against a live Engram server: upload, promote, and idempotent re-firing."""

import io
import json

import pytest

from apps.mcp import stop_hook
from apps.memory.models import Memory, PromotionJob, SessionMemory
from apps.memory.services import promotion_run
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_create
from tests.memory.promotion_pipeline.conftest import FakePromoter, fact

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])


def _claude_transcript(path, *exchanges):
    lines = []
    for user_text, assistant_text in exchanges:
        lines.append({"type": "user", "message": {"role": "user", "content": user_text}})
        lines.append(
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": assistant_text},
                        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}},
                    ],
                },
            }
        )
    lines.append({"type": "user", "isMeta": True, "message": {"role": "user", "content": "meta"}})
    lines.append(
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
        }
    )
    path.write_text("\n".join(json.dumps(line) for line in lines))


@pytest.fixture
def hook(live_server, tenant, monkeypatch, fake_http):
    tenant.llm_provider = "openai"
    tenant.llm_config = {"base_url": fake_http.url("/v1"), "model": "fake"}
    tenant.save()
    issued = api_key_create(tenant=tenant, role=ApiKeyRole.AGENT, agent_id="coder")
    monkeypatch.setenv("ENGRAM_API_URL", live_server.url)
    monkeypatch.setenv("ENGRAM_API_KEY", issued.raw_key)

    def fire(session_id, transcript_path):
        out = io.StringIO()
        event = {"session_id": session_id, "transcript_path": str(transcript_path)}
        code = stop_hook.main(stdin=io.StringIO(json.dumps(event)), stdout=out)
        return code, (json.loads(out.getvalue()) if out.getvalue() else None)

    return fire


def test_hook_uploads_the_session_and_promotes_it(hook, tmp_path, tenant, fake_http):
    transcript = tmp_path / "t.jsonl"
    _claude_transcript(transcript, ("I always use ruff", "Noted."), ("thanks", "You're welcome"))

    code, summary = hook("cc-1", transcript)

    turns = list(SessionMemory.objects.filter(session_id="cc-1").order_by("seq"))
    assert code == 0
    assert summary["uploaded"] == 4
    assert summary["promotion"]["reason"] == "enqueued"
    assert [(t.role, t.content) for t in turns] == [
        ("user", "I always use ruff"),
        ("assistant", "Noted."),
        ("user", "thanks"),
        ("assistant", "You're welcome"),
    ]
    assert {t.subject_id for t in turns} == {"coder"}


def test_refiring_the_hook_adds_nothing(hook, tmp_path, tenant, fake_http):
    promoter = FakePromoter(fake_http)
    promoter.says(fact("The user always uses ruff."))
    transcript = tmp_path / "t.jsonl"
    _claude_transcript(transcript, ("I always use ruff", "Noted."))
    hook("cc-1", transcript)
    promotion_run(job_id=PromotionJob.objects.get().pk)
    before = (SessionMemory.objects.count(), Memory.objects.count(), PromotionJob.objects.count())

    code, summary = hook("cc-1", transcript)

    after = (SessionMemory.objects.count(), Memory.objects.count(), PromotionJob.objects.count())
    assert code == 0
    assert summary["uploaded"] == 0
    assert summary["promotion"]["reason"] == "unchanged"
    assert after == before == (2, 1, 1)
    assert len(promoter.calls) == 1


def test_hook_uploads_only_new_turns_when_the_session_continues(hook, tmp_path):
    transcript = tmp_path / "t.jsonl"
    _claude_transcript(transcript, ("first", "one"))
    hook("cc-1", transcript)
    _claude_transcript(transcript, ("first", "one"), ("second", "two"))

    _, summary = hook("cc-1", transcript)

    assert summary["uploaded"] == 2
    assert list(SessionMemory.objects.order_by("seq").values_list("content", flat=True)) == [
        "first",
        "one",
        "second",
        "two",
    ]


def test_hook_reports_bad_input_and_api_errors_with_exit_1(hook, tmp_path, monkeypatch, capsys):
    missing = hook("cc-1", tmp_path / "nope.jsonl")
    transcript = tmp_path / "t.jsonl"
    _claude_transcript(transcript, ("a", "b"))
    monkeypatch.setenv("ENGRAM_API_KEY", "eng_bad_key")
    unauthorized = hook("cc-1", transcript)

    assert missing == (1, None)
    assert unauthorized == (1, None)
    assert "authentication_failed" in capsys.readouterr().err
    assert SessionMemory.objects.count() == 0
