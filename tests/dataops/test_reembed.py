import numpy as np
import pytest
from django.core.management.base import CommandError

from apps.dataops.models import ReembedRun
from apps.dataops.selectors import memory_stats
from apps.knowledge.services import article_archive, article_embedding_text
from apps.memory.models import Memory
from tests.dataops.helpers import run_json, table_counts
from tests.knowledge.helpers import CURATOR, publish
from tests.memory.helpers import remember
from tests.providers.fake_http import FakeResponse, error_payload, openai_embeddings_payload

PATH = "/v1/embeddings"


def _basis(index):
    vector = [0.0] * 384
    vector[index] = 1.0
    return vector


def _ok(*indexes):
    return FakeResponse(json_body=openai_embeddings_payload([_basis(i) for i in indexes]))


FAIL = FakeResponse(status=500, json_body=error_payload())


def _switch_provider(tenant, server, model="embed-v2"):
    """What configure_provider stores, minus its probe call (which would count a request)."""
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": server.url("/v1"), "model": model}
    tenant.save()


def _vector(model, pk):
    return np.asarray(type(model).objects.get(pk=pk).embedding, dtype=np.float32).tolist()


def _inputs(server):
    return [request.body["input"] for request in server.requests_to(PATH)]


@pytest.fixture
def rows(tenant):
    """Four memories (one superseded) and two articles, embedded by the old (fake) provider,
    plus an archived article reembed must leave alone."""
    memories = [remember(tenant, "agent-a", f"Memory number {n}.") for n in range(4)]
    Memory.objects.filter(pk=memories[0].pk).update(superseded_by=memories[1])
    articles = [publish(tenant, f"Article {n}", f"Body {n}.") for n in range(2)]
    archived = publish(tenant, "Archived", "Gone.")
    article_archive(tenant=tenant, viewer=CURATOR, article_id=archived.pk)
    return {"memories": memories, "articles": articles, "archived": archived}


def test_reembed_stores_the_new_providers_vectors(tenant, rows, fake_http):
    _switch_provider(tenant, fake_http)
    fake_http.respond("POST", PATH, _ok(0, 1), _ok(2, 3), _ok(4, 5))
    archived_before = _vector(rows["archived"], rows["archived"].pk)

    body = run_json("reembed", "--tenant", tenant.slug, "--batch", "2")

    assert body["memories"] == 4
    assert body["articles"] == 2
    assert body["resumed"] is False
    assert body["provider"] == f"openai|{fake_http.url('/v1')}|embed-v2"
    assert [_vector(m, m.pk) for m in rows["memories"]] == [_basis(i) for i in range(4)]
    assert [_vector(a, a.pk) for a in rows["articles"]] == [_basis(4), _basis(5)]
    assert _vector(rows["archived"], rows["archived"].pk) == archived_before
    assert _inputs(fake_http) == [
        ["Memory number 0.", "Memory number 1."],
        ["Memory number 2.", "Memory number 3."],
        [article_embedding_text(title=a.title, body=a.body) for a in rows["articles"]],
    ]
    assert fake_http.requests_to(PATH)[0].body["model"] == "embed-v2"
    run = ReembedRun.objects.get(tenant=tenant)
    assert run.finished_at is not None
    assert (run.memories_embedded, run.articles_embedded, run.last_error) == (4, 2, "")


def test_reembed_resumes_after_an_interruption_without_redoing_batches(tenant, rows, fake_http):
    _switch_provider(tenant, fake_http)
    fake_http.respond("POST", PATH, _ok(0, 1), FAIL)
    memories = rows["memories"]
    old_vectors = [_vector(m, m.pk) for m in memories]

    with pytest.raises(
        CommandError, match=r"embeddings_unavailable: .*run the same command"
    ) as exc:
        run_json("reembed", "--tenant", tenant.slug, "--batch", "2")

    assert exc.value.returncode == 1
    assert len(fake_http.requests_to(PATH)) == 2
    assert [_vector(m, m.pk) for m in memories[:2]] == [_basis(0), _basis(1)]
    # The rest still carry the old provider's vectors.
    assert [_vector(m, m.pk) for m in memories[2:]] == old_vectors[2:]
    run = ReembedRun.objects.get(tenant=tenant)
    assert run.finished_at is None
    assert run.memories_embedded == 2
    assert run.last_error.startswith("provider_error: ")
    (stats,) = memory_stats(tenant=tenant)
    assert stats.reembed_in_progress is not None
    assert stats.reembed_in_progress.memories_embedded == 2
    done_at = {m.pk: Memory.objects.get(pk=m.pk).embedded_at for m in memories[:2]}

    fake_http.respond("POST", PATH, _ok(2, 3), _ok(4, 5))
    body = run_json("reembed", "--tenant", tenant.slug, "--batch", "2")

    assert body["resumed"] is True
    assert body["run_id"] == str(run.pk)
    assert (body["memories"], body["articles"]) == (2, 2)
    requests = _inputs(fake_http)
    assert len(requests) == 4  # 2 before the failure, 2 after: nothing sent twice
    assert requests[2:] == [
        ["Memory number 2.", "Memory number 3."],
        [article_embedding_text(title=a.title, body=a.body) for a in rows["articles"]],
    ]
    assert [_vector(m, m.pk) for m in memories] == [_basis(i) for i in range(4)]
    assert {m.pk: Memory.objects.get(pk=m.pk).embedded_at for m in memories[:2]} == done_at
    run.refresh_from_db()
    assert run.finished_at is not None
    assert (run.memories_embedded, run.articles_embedded, run.last_error) == (4, 2, "")


def test_a_finished_run_is_not_resumed(tenant, rows, fake_http):
    _switch_provider(tenant, fake_http)
    fake_http.respond("POST", PATH, _ok(0, 1, 2, 3), _ok(4, 5))
    run_json("reembed", "--tenant", tenant.slug, "--batch", "4")
    fake_http.respond("POST", PATH, _ok(6, 7, 8, 9), _ok(10, 11))

    body = run_json("reembed", "--tenant", tenant.slug, "--batch", "4")

    assert body["resumed"] is False
    assert (body["memories"], body["articles"]) == (4, 2)
    assert ReembedRun.objects.filter(tenant=tenant, finished_at__isnull=False).count() == 2


def test_a_provider_change_closes_the_open_run_and_starts_over(tenant, rows, fake_http):
    _switch_provider(tenant, fake_http)
    fake_http.respond("POST", PATH, _ok(0, 1), FAIL)
    with pytest.raises(CommandError):
        run_json("reembed", "--tenant", tenant.slug, "--batch", "2")
    first = ReembedRun.objects.get(tenant=tenant)
    _switch_provider(tenant, fake_http, model="embed-v3")
    fake_http.respond("POST", PATH, _ok(10, 11), _ok(12, 13), _ok(14, 15))

    body = run_json("reembed", "--tenant", tenant.slug, "--batch", "2")

    assert body["resumed"] is False
    assert body["memories"] == 4  # the two done for embed-v2 are redone
    first.refresh_from_db()
    assert first.finished_at is not None
    assert first.last_error == "closed: a run for another provider started"
    assert [_vector(m, m.pk) for m in rows["memories"]] == [_basis(i) for i in (10, 11, 12, 13)]


def test_only_pending_embeds_rows_without_a_vector(tenant, rows, fake_http):
    pending_memory = remember(tenant, "agent-b", "Not embedded yet.", embed=False)
    pending_article = publish(tenant, "Pending article", "Body.", embed=False)
    _switch_provider(tenant, fake_http)
    fake_http.respond("POST", PATH, _ok(7), _ok(8))
    before = {m.pk: _vector(m, m.pk) for m in rows["memories"]}

    body = run_json("reembed", "--tenant", tenant.slug, "--only-pending")

    assert (body["memories"], body["articles"], body["run_id"]) == (1, 1, None)
    assert _inputs(fake_http) == [
        ["Not embedded yet."],
        [article_embedding_text(title="Pending article", body="Body.")],
    ]
    assert _vector(pending_memory, pending_memory.pk) == _basis(7)
    assert _vector(pending_article, pending_article.pk) == _basis(8)
    assert {m.pk: _vector(m, m.pk) for m in rows["memories"]} == before
    assert not ReembedRun.objects.filter(tenant=tenant).exists()


def test_reembed_touches_only_the_named_tenant(tenant, other_tenant, rows, fake_http):
    foreign = remember(other_tenant, "agent-a", "Foreign memory.")
    foreign_vector = _vector(foreign, foreign.pk)
    _switch_provider(tenant, fake_http)
    fake_http.respond("POST", PATH, _ok(0, 1, 2, 3), _ok(4, 5))

    run_json("reembed", "--tenant", tenant.slug, "--batch", "4")

    assert _vector(foreign, foreign.pk) == foreign_vector
    assert all("Foreign memory." not in batch for batch in _inputs(fake_http))


@pytest.mark.parametrize(
    ("_case", "args", "message"),
    [
        ("unknown_tenant", ["--tenant", "no-such-tenant"], "not_found"),
        ("zero_batch", ["--tenant", "{slug}", "--batch", "0"], "--batch must be positive"),
    ],
)
def test_reembed_rejects_bad_input(tenant, rows, _case, args, message):
    counts = table_counts()
    vectors = [_vector(m, m.pk) for m in rows["memories"]]

    with pytest.raises(CommandError, match=message) as exc:
        run_json("reembed", *[arg.format(slug=tenant.slug) for arg in args])

    assert exc.value.returncode == 1
    assert table_counts() == counts
    assert [_vector(m, m.pk) for m in rows["memories"]] == vectors
