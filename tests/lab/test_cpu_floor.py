"""load_bench --cpu-floor: which processes are the service, and the figures it prints."""

from __future__ import annotations

import os
import socket

import pytest

from lab import cpu_floor, load_bench
from tests.lab.test_load_bench import _fake_process


def test_only_the_processes_kept_are_read(tmp_path):
    _fake_process(tmp_path, 10, "postgres: engram engram [local] idle", utime=40, stime=2)
    _fake_process(tmp_path, 11, "celery -A config worker", utime=7, stime=1)
    seen = []

    def keep(*, pid, parent, role):
        seen.append((pid, parent, role))
        return role == "postgres"

    ticks = load_bench.read_process_ticks(str(tmp_path), keep=keep)

    assert ticks == {10: ("postgres", 42)}
    assert sorted(seen) == [(10, 1, "postgres"), (11, 1, "worker")]


def test_the_service_is_its_directorys_processes_and_its_clusters_backends():
    here = os.getpid()
    service = cpu_floor.ServiceProcesses(directory=os.getcwd(), postmaster=500, own_backend=502)
    elsewhere = cpu_floor.ServiceProcesses(directory="/nowhere", postmaster=500, own_backend=502)

    assert service.includes(pid=500, parent=1, role="postgres") is True
    assert service.includes(pid=501, parent=500, role="postgres") is True
    assert service.includes(pid=502, parent=500, role="postgres") is False  # the harness's own
    assert service.includes(pid=601, parent=600, role="postgres") is False  # another cluster
    for role in ("web", "worker", "beat"):
        assert service.includes(pid=here, parent=1, role=role) is True
        assert elsewhere.includes(pid=here, parent=1, role=role) is False
    assert service.includes(pid=here, parent=1, role="other") is False


def test_the_process_listening_on_a_port_is_found():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        assert os.getpid() in cpu_floor.listening_pids(port)
    assert os.getpid() not in cpu_floor.listening_pids(port)


@pytest.mark.django_db
def test_a_port_nobody_listens_on_is_refused():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    with pytest.raises(cpu_floor.CpuFloorRefused, match=f"port {port}"):
        cpu_floor.find_service(f"http://127.0.0.1:{port}")


@pytest.mark.parametrize(
    ("_case", "changes"),
    [
        ("no recalls", {"recalls": 0}),
        ("no writes", {"writes": 0}),
        ("no memories", {"memories": 0}),
        ("too many runs", {"repeat": cpu_floor.MAX_REPEAT + 1}),
        ("a remote server", {"url": "http://10.0.0.1:8000"}),
    ],
)
def test_bounds_are_enforced(_case, changes):
    plan = cpu_floor.FloorPlan(url="http://127.0.0.1:8000")

    with pytest.raises((cpu_floor.CpuFloorRefused, load_bench.LoadBenchRefused)):
        cpu_floor.validate(cpu_floor.FloorPlan(**{**plan.__dict__, **changes}))


def test_a_phase_is_the_service_cpu_over_the_embedding():
    phase = cpu_floor._phase(
        count=200, by_role={"web": 6.0, "postgres": 2.0}, seconds=3.0, embedding_ms=2.5
    )

    assert phase == {
        "requests": 200,
        "service_cpu_ms": 8.0,
        "embedding_cpu_ms": 2.5,
        "ratio": 3.2,
        "overhead_ms": 5.5,
        "by_process": {"web": 6.0, "postgres": 2.0},
        "wall_ms": 15.0,
    }


def test_the_median_of_runs_is_taken_figure_by_figure():
    runs = [
        cpu_floor._phase(count=10, by_role=roles, seconds=0.1, embedding_ms=embedding)
        for roles, embedding in (
            ({"web": 6.0, "postgres": 2.0}, 2.0),
            ({"web": 9.0}, 3.0),
            ({"web": 7.0, "postgres": 1.0, "worker": 0.2}, 2.5),
        )
    ]

    median = cpu_floor._median_phase(runs)

    # Service 8.0 / 9.0 / 8.2 ms; ratios 4.0 / 3.0 / 3.28; overheads 6.0 / 6.0 / 5.7.
    assert median == {
        "service_cpu_ms": 8.2,
        "embedding_cpu_ms": 2.5,
        "ratio": 3.28,
        "overhead_ms": 6.0,
        "wall_ms": 10.0,
        "by_process": {"postgres": 1.0, "web": 7.0, "worker": 0.0},
    }


def test_the_report_prints_each_run_and_the_medians():
    from lab.management.commands.load_bench import floor_report_text

    phase = cpu_floor._phase(count=200, by_role={"web": 6.0}, seconds=2.0, embedding_ms=2.0)
    report = {
        "url": "http://127.0.0.1:8000",
        "service_directory": "/srv/engram",
        "memories": 300,
        "embedding_threads": 1,
        "runs": [{"recall": phase, "write": phase}] * 2,
        "median": {"recall": phase, "write": phase},
    }

    lines = floor_report_text(report).splitlines()

    assert len(lines) == 7
    assert lines[0].startswith("load_bench --cpu-floor against http://127.0.0.1:8000")
    assert lines[5] == (
        "  median recall   3.0x  service 6.0 ms of CPU, embedding 2.0 ms, overhead 4.0 ms  "
        "(web 6.0; 10.0 ms wall)"
    )
