"""A worker's Prometheus endpoint (``metrics_bind``): served at ``GET /metrics`` while the
worker runs, on the address :attr:`flexiq.Worker.metrics_addr` reports, and refused with a
typed error when the address is not one. The endpoint does not depend on the store, so one
store (SQLite) covers it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from flexiq import BackendError, InvalidArgument, Queue, WrongType


def _register(queue: Queue) -> None:
    @queue.task(name="metrics.double")
    def double(x: int) -> int:
        return x * 2


def _scrape(addr: str) -> Tuple[str, str]:
    """The endpoint's content type and text."""
    with urllib.request.urlopen(f"http://{addr}/metrics", timeout=10) as resp:
        assert resp.status == 200
        return resp.headers["Content-Type"], resp.read().decode()


def _samples(text: str) -> Dict[str, float]:
    """``{"name{labels}": value}`` of the exposition's sample lines."""
    out: Dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def _attempts(text: str, worker: str, task: str, outcome: str) -> float:
    """``flexiq_worker_attempts_total`` of one worker, task and outcome (0 when absent)."""
    found = [
        v
        for k, v in _samples(text).items()
        if k.startswith("flexiq_worker_attempts_total{")
        and f'worker="{worker}"' in k
        and f'task="{task}"' in k
        and f'outcome="{outcome}"' in k
    ]
    assert len(found) <= 1, found
    return found[0] if found else 0.0


def test_a_worker_serves_its_attempts_on_the_bound_address(sqlite_queue: Queue) -> None:
    _register(sqlite_queue)
    w = sqlite_queue.worker(concurrency=2, worker_id="py-metered", metrics_bind="127.0.0.1:0")
    assert w.metrics_addr is None  # not running yet
    with w:
        addr = w.metrics_addr
        assert addr is not None and addr.startswith("127.0.0.1:")
        assert int(addr.rpartition(":")[2]) > 0  # port 0 asked for a free port; this is it
        jobs = [sqlite_queue.enqueue("metrics.double", args=[i]) for i in range(3)]
        assert [j.result(timeout=30) for j in jobs] == [0, 2, 4]
        # An attempt is counted as its handler ends, before its ack makes the result visible.
        content_type, text = _scrape(addr)
        assert _attempts(text, "py-metered", "metrics.double", "completed") == 3
        assert content_type.startswith("application/openmetrics-text")
        assert _attempts(text, "py-metered", "metrics.double", "failed") == 0
        # The store-level gauges come along.
        assert 'flexiq_jobs{' in text and 'status="completed"' in text


def test_without_metrics_bind_there_is_no_address(sqlite_queue: Queue) -> None:
    _register(sqlite_queue)
    with sqlite_queue.worker(concurrency=1) as w:
        assert w.ready and w.metrics_addr is None


def test_a_worker_whose_metrics_address_is_taken_raises_at_start(sqlite_queue: Queue) -> None:
    _register(sqlite_queue)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        addr = "127.0.0.1:%d" % taken.getsockname()[1]
        w = sqlite_queue.worker(concurrency=1, metrics_bind=addr)
        with pytest.raises(BackendError) as e:
            w.start(ready_timeout=60)
    assert addr in str(e.value)
    assert w.ready is False and w.metrics_addr is None


@pytest.mark.parametrize("bad", [9100, 1.5, b"127.0.0.1:9100", ["127.0.0.1:9100"], True])
def test_a_metrics_bind_that_is_not_a_string_is_wrong_type(sqlite_queue: Queue, bad: Any) -> None:
    _register(sqlite_queue)
    with pytest.raises(WrongType) as e:
        sqlite_queue.worker(metrics_bind=bad)
    assert "metrics_bind" in str(e.value) and e.value.code == "INVALID_ARGUMENT"
    assert isinstance(e.value, TypeError)


@pytest.mark.parametrize("bad", ["", "127.0.0.1", "localhost:9100", "127.0.0.1:99999", ":9100", "0.0.0.0:-1"])
def test_a_malformed_metrics_bind_is_invalid_argument(sqlite_queue: Queue, bad: str) -> None:
    _register(sqlite_queue)
    with pytest.raises(InvalidArgument) as e:
        sqlite_queue.worker(metrics_bind=bad)
    assert "metrics_bind" in str(e.value) and f'"{bad}"' in str(e.value)
    assert not isinstance(e.value, WrongType)
    with pytest.raises(InvalidArgument):
        sqlite_queue.run_worker(metrics_bind=bad)


APP = textwrap.dedent(
    """
    import os
    from flexiq import Queue

    queue = Queue(url=os.environ["FLEXIQ_TEST_URL"])

    @queue.task(name="metrics.cli")
    def echo(x):
        return x
    """
)


def _cli(tmp_path: Path, url: str, *args: str) -> "subprocess.Popen[str]":
    (tmp_path / "metricsapp.py").write_text(APP)
    env = dict(os.environ, FLEXIQ_TEST_URL=url, PYTHONPATH=str(tmp_path))
    cmd = [sys.executable, "-m", "flexiq", "worker", "--app", "metricsapp:queue", *args]
    return subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_worker_command_serves_metrics_with_metrics_bind(tmp_path: Path) -> None:
    url = str(tmp_path / "tasks.db")
    q = Queue(url=url)
    try:
        addr = f"127.0.0.1:{_free_port()}"
        proc = _cli(tmp_path, url, "--metrics-bind", addr)
        try:
            jobs = [q.enqueue("metrics.cli", args=[i]) for i in range(2)]
            assert [q.result(j.id, timeout=60) for j in jobs] == [0, 1]
            # One worker, whose id the command chose: its series are the only ones.
            completed = [
                v
                for k, v in _samples(_scrape(addr)[1]).items()
                if k.startswith("flexiq_worker_attempts_total{")
                and 'task="metrics.cli"' in k
                and 'outcome="completed"' in k
            ]
            assert completed == [2.0]
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, err
        assert f"metrics on {addr}" in out, out
    finally:
        q.close()


def test_the_worker_command_refuses_a_bad_metrics_bind(tmp_path: Path) -> None:
    proc = _cli(tmp_path, str(tmp_path / "tasks.db"), "--metrics-bind", "nowhere")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "INVALID_ARGUMENT" in err and "metrics_bind" in err and "nowhere" in err
