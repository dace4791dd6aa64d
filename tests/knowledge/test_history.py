"""The shown-articles history behind containment: keyed by tenant, subject and session."""

from __future__ import annotations

import uuid

from django.core.cache import cache

from apps.knowledge.history import RecallHistory

TENANT = uuid.uuid4()
ARTICLES = [uuid.uuid4() for _ in range(3)]


def test_marked_articles_are_seen_by_the_same_session():
    # given
    history = RecallHistory(TENANT, "agent-a", "session-1", ttl=60)

    # when
    history.mark(ARTICLES[:2])

    # then
    assert history.seen(ARTICLES) == {str(ARTICLES[0]), str(ARTICLES[1])}


def test_another_session_subject_or_tenant_sees_nothing():
    # given
    RecallHistory(TENANT, "agent-a", "session-1", ttl=60).mark(ARTICLES)

    # when
    other_session = RecallHistory(TENANT, "agent-a", "session-2", ttl=60).seen(ARTICLES)
    other_subject = RecallHistory(TENANT, "agent-b", "session-1", ttl=60).seen(ARTICLES)
    other_tenant = RecallHistory(uuid.uuid4(), "agent-a", "session-1", ttl=60).seen(ARTICLES)

    # then
    assert (other_session, other_subject, other_tenant) == (set(), set(), set())


def test_an_evicted_history_simply_resurfaces_articles():
    # given
    history = RecallHistory(TENANT, "agent-a", "session-1", ttl=60)
    history.mark(ARTICLES)

    # when
    cache.clear()

    # then
    assert history.seen(ARTICLES) == set()


def test_any_session_token_makes_a_safe_key():
    # given: spaces, colons and non-ASCII bytes in a client-chosen token
    history = RecallHistory(TENANT, "agent-a", "weird token: ünïcode/… \n", ttl=60)

    # when
    history.mark(ARTICLES[:1])

    # then
    assert history.seen(ARTICLES) == {str(ARTICLES[0])}
