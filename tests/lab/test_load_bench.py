"""load_bench: loopback only, bounded, seeds and removes its own tenant, counts every request."""

from __future__ import annotations

import os

import pytest
from django.db import connection

from apps.memory.models import Memory
from apps.memory.services import memory_drain_embeddings
from apps.tenancy.models import Tenant
from lab import load_bench
from lab.memory_bench import distinct_topics, synthetic_sentences


@pytest.mark.parametrize(
    ("_case", "url"),
    [
        ("public host", "http://example.com:8000"),
        ("private address", "http://10.0.0.5:8000"),
        ("not http", "ftp://127.0.0.1/"),
    ],
)
def test_only_loopback_servers_are_loaded(_case, url):
    with pytest.raises(load_bench.LoadBenchRefused):
        load_bench.require_loopback(url)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/", "http://localhost:9", "http://[::1]:80"])
def test_loopback_urls_are_accepted(url):
    assert load_bench.require_loopback(url) == url.rstrip("/")


@pytest.mark.parametrize(
    ("_case", "changes"),
    [
        ("too many clients", {"clients": load_bench.MAX_CLIENTS + 1}),
        ("no time", {"seconds": 0}),
        ("too long", {"seconds": load_bench.MAX_SECONDS + 1}),
        ("unbounded requests", {"max_requests": load_bench.MAX_REQUESTS + 1}),
        ("unknown mix", {"mix": "delete"}),
    ],
)
def test_bounds_are_enforced(_case, changes):
    plan = {"url": "http://127.0.0.1:8000", "clients": 8, "seconds": 15, "mix": "mixed"}
    with pytest.raises(load_bench.LoadBenchRefused):
        load_bench.validate(load_bench.LoadPlan(**{**plan, "max_requests": 100, **changes}))


@pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])
def test_a_mixed_run_counts_every_request_and_removes_its_tenant(live_server):
    analyses_before = {table: _stat(table, "analyze_count") for table in load_bench.SEEDED_TABLES}
    tenant, agents = load_bench.seed(agents=2, memories_per_agent=5, settle_seconds=0)
    assert Memory.objects.filter(tenant=tenant, embedding__isnull=False).count() == 10
    # The seeded tables' statistics are fresh before the clock starts.
    for table, before in analyses_before.items():
        assert _stat(table, "analyze_count") == before + 1, table

    plan = load_bench.LoadPlan(
        url=live_server.url, clients=2, seconds=60, mix="mixed", max_requests=20
    )
    report = load_bench.run(plan=load_bench.validate(plan), agents=agents)
    operations = report["operations"]
    assert operations["recall"]["requests"] + operations["write"]["requests"] == 20
    assert operations["write"]["requests"] == 5  # one in MIXED_WRITE_EVERY tickets
    assert operations["recall"]["errors"] == 0
    assert operations["write"]["errors"] == 0
    assert operations["write"]["statuses"] == {"201": 5}

    machine = report["machine"]
    assert 0 < machine["busy_share"] <= 1
    assert 0 <= machine["steal_share"] < 1
    assert machine["cpu_ms_per_request"] > 0
    # The live server runs in this process, so the load generator's share holds the server's.
    assert report["cpu_ms_per_request_by_process"]["load generator"] > 0

    # No worker runs here: the five writes wait for a vector until something embeds them.
    assert load_bench.wait_embedded(tenant=tenant, timeout=0.3) == {
        "pending_at_stop": 5,
        "all_embedded_after_s": None,
    }
    while memory_drain_embeddings(tenant_id=tenant.pk).more:
        pass
    assert load_bench.wait_embedded(tenant=tenant, timeout=0.3) == {
        "pending_at_stop": 0,
        "all_embedded_after_s": 0.0,
    }

    vacuums_before = _stat("memory_memory", "vacuum_count")
    assert load_bench.remove(tenant=tenant) == 15
    assert _stat("memory_memory", "vacuum_count") == vacuums_before + 1
    assert Tenant.objects.filter(pk=tenant.pk).count() == 0
    assert Memory.objects.filter(tenant_id=tenant.pk).count() == 0


def _stat(table: str, counter: str) -> int:
    """One of ``table``'s cumulative counters in ``pg_stat_user_tables`` (a trusted name)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {counter} FROM pg_stat_user_tables WHERE relname = %s",  # noqa: S608
            [table],
        )
        (count,) = cursor.fetchone()
    return int(count)


def test_machine_cpu_is_busy_time_over_the_run_per_request(monkeypatch):
    monkeypatch.setattr(os, "sysconf", lambda name: 100)  # clock ticks per second
    before = load_bench.MachineTimes(busy=1_000, steal=10, total=5_000)
    after = load_bench.MachineTimes(busy=1_300, steal=30, total=5_400)

    figures = load_bench.machine_cpu(before, after, requests=150)

    # 300 busy ticks of 400 on the clock; 3 CPU-seconds over 150 requests.
    assert figures == {"busy_share": 0.75, "steal_share": 0.05, "cpu_ms_per_request": 20.0}
    assert load_bench.machine_cpu(before, None, requests=150) is None
    assert load_bench.machine_cpu(before, after, requests=0)["cpu_ms_per_request"] is None


def test_unique_queries_are_natural_and_never_repeat_in_a_run():
    topics = distinct_topics(seed=3)
    clients = 8
    share = len(topics) // clients
    # Two full rounds of every client's share: the second round repeats no text either.
    asked = [
        load_bench.unique_query(topics, client=client, clients=clients, sent=sent)
        for client in range(clients)
        for sent in range(2 * share)
    ]
    assert len(set(asked)) == len(asked)
    first = load_bench.unique_query(topics, client=0, clients=clients, sent=0)
    assert first == topics[0]
    assert load_bench.unique_query(topics, client=0, clients=clients, sent=share) == (
        f"{topics[0]} (2)"
    )


def test_distinct_topics_are_every_sentence_once_in_a_seeded_order():
    topics = distinct_topics(seed=1)
    assert len(topics) == len(set(topics)) > 8_000
    assert topics == distinct_topics(seed=1)
    assert topics != distinct_topics(seed=2)
    assert sorted(topics) == sorted(distinct_topics(seed=2))
    # The sentences memories are seeded with, without their note numbers.
    seeded = {text.rsplit(" (note", 1)[0] for text in synthetic_sentences(50, seed=7)}
    assert seeded <= set(topics)


@pytest.mark.parametrize(
    ("command_line", "role"),
    [
        (".venv/bin/python .venv/bin/gunicorn config.wsgi:application -c gunicorn.py", "web"),
        ("python manage.py runserver 8000", "web"),
        (".venv/bin/python .venv/bin/celery -A config worker --concurrency 2", "worker"),
        ("celery -A config beat --loglevel INFO", "beat"),
        ("postgres: engram engram [local] idle", "postgres"),
        ("/opt/pg/bin/postgres -D /data/pg", "postgres"),
        ("bash -c sleep 1", "other"),
        ("", "other"),
    ],
)
def test_processes_are_told_apart_by_their_command_line(command_line, role):
    assert load_bench.process_role(command_line) == role


def test_process_ticks_are_read_from_proc(tmp_path):
    _fake_process(
        tmp_path, 10, "postgres: engram engram [local] idle", utime=40, stime=2, children=5
    )
    # A command name with a space and a parenthesis, as the kernel writes it.
    _fake_process(tmp_path, 11, "celery -A config worker", utime=7, stime=1, name="a) b")
    _fake_process(tmp_path, os.getpid(), "python manage.py load_bench", utime=3, stime=0)
    (tmp_path / "self").mkdir()  # not a process

    assert load_bench.read_process_ticks(str(tmp_path)) == {
        10: ("postgres", 47),
        11: ("worker", 8),
        os.getpid(): ("load generator", 3),
    }


def test_cpu_by_role_is_each_roles_time_over_the_run_per_request(monkeypatch):
    monkeypatch.setattr(os, "sysconf", lambda name: 100)  # clock ticks per second
    before = {
        1: ("web", 500),
        2: ("web", 100),
        3: ("postgres", 50),  # a backend whose pid is reused by a worker during the run
        5: ("postgres", 1_000),  # the postmaster
        6: ("postgres", 30),  # a backend that runs 20 ticks more, exits and is reaped
    }
    # Process 4 was born during the run; the postmaster's children time now holds backend 6's
    # 50 ticks and backend 3's 70 (20 of them in the run).
    after = {
        1: ("web", 800),
        2: ("web", 200),
        3: ("worker", 20),
        4: ("postgres", 100),
        5: ("postgres", 1_000 + 50 + 70),
    }

    figures = load_bench.cpu_by_role(before, after, requests=200)

    # web: 400 ticks = 4 s over 200 requests; postgres 100 + 20 + 20 ticks; the reused pid
    # from zero.
    assert figures == {"web": 20.0, "postgres": 7.0, "worker": 1.0}
    assert list(figures) == ["web", "postgres", "worker"]  # largest first
    assert load_bench.cpu_by_role(before, after, requests=0) == {}


def _fake_process(
    proc, pid: int, command_line: str, *, utime: int, stime: int, name: str = "x", children: int = 0
) -> None:
    directory = proc / str(pid)
    directory.mkdir()
    (directory / "cmdline").write_bytes(command_line.replace(" ", "\0").encode() + b"\0")
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    # cutime cstime (the reaped children's user and system time)
    (directory / "stat").write_text(
        f"{pid} ({name}) S 1 1 1 0 -1 0 0 0 0 0 {utime} {stime} {children} 0 20 0\n"
    )
