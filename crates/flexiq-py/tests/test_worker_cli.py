"""The worker entry point and the ops commands: ``flexiq worker --app module:queue`` (and
``python -m flexiq``) with graceful shutdown on SIGTERM / SIGINT, and the Rust CLI's
commands through the same console script."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from flexiq import InvalidArgument, Queue
from flexiq.cli import main

APP = textwrap.dedent(
    """
    import os, time
    from flexiq import Queue

    queue = Queue(url=os.environ["FLEXIQ_TEST_URL"])

    @queue.task(name="cli.slow")
    def slow(x):
        time.sleep(0.5)
        return x * 2

    @queue.task(name="cli.hold")
    def hold(path):
        while not os.path.exists(path):
            time.sleep(0.01)
    """
)


def _start(tmp_path: Path, store_url: str, *cmd: str) -> subprocess.Popen:
    (tmp_path / "cliapp.py").write_text(APP)
    env = dict(os.environ, FLEXIQ_TEST_URL=store_url, PYTHONPATH=str(tmp_path))
    return subprocess.Popen(list(cmd), cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_worker_command_runs_jobs_and_stops_gracefully(tmp_path: Path, store_url: str, sig: int) -> None:
    q = Queue(url=store_url)
    try:
        first = q.enqueue("cli.slow", args=[21])
        proc = _start(tmp_path, store_url, sys.executable, "-m", "flexiq", "worker", "--app", "cliapp:queue", "--concurrency", "2")
        try:
            assert q.result(first.id, timeout=60) == 42
            inflight = q.enqueue("cli.slow", args=[1])
            deadline = time.monotonic() + 20
            while inflight.status != "running" and time.monotonic() < deadline:
                time.sleep(0.01)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, err
        assert "stopped after" in out
        # the in-flight job finished during the graceful shutdown
        assert inflight.status == "completed" and q.get_result(inflight.id) == 2
    finally:
        q.close()


def test_worker_command_rejects_a_bad_app(tmp_path: Path, store_url: str) -> None:
    proc = _start(tmp_path, store_url, sys.executable, "-m", "flexiq", "worker", "--app", "cliapp:nothing")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "nothing" in err


def test_ops_commands_call_the_rust_cli(queue: Queue, store_url: str, capfd: pytest.CaptureFixture[str]) -> None:
    queue.enqueue("t", queue="ops")
    assert main(["--url", store_url, "--json", "stats"]) == 0
    out = capfd.readouterr().out
    assert "ops" in out and json.loads(out)
    assert main(["--url", store_url, "queue", "pause", "ops"]) == 0
    assert queue.paused_queues() == ["ops"]
    assert main(["--url", store_url, "bogus-command"]) == 2
    assert main(["--url", store_url, "requeue", "not-a-uuid"]) == 2


def test_worker_command_applies_lease_and_maintenance(tmp_path: Path, store_url: str) -> None:
    q = Queue(url=store_url)
    release = tmp_path / "release"
    try:
        job = q.enqueue("cli.hold", args=[str(release)])
        cmd = ["--app", "cliapp:queue", "--lease", "0.6", "--no-maintenance"]
        proc = _start(tmp_path, store_url, sys.executable, "-m", "flexiq", "worker", *cmd)
        try:
            # A 0.6 s lease renews every 0.2 s: the running job's heartbeat moves past its start
            # (the default 30 s lease would not renew it for 10 s).
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                j = q.get_job(job.id)
                if j.status == "running" and j.heartbeat_at is not None and j.heartbeat_at > (j.started_at or 0):
                    break
                time.sleep(0.01)
            else:
                raise AssertionError(f"the job's lease was never renewed: {q.get_job(job.id)}")
            release.write_text("")
            deadline = time.monotonic() + 20
            while job.status != "completed" and time.monotonic() < deadline:
                time.sleep(0.01)
            assert job.status == "completed"
            # Without maintenance the worker never became cleaner, so it published nothing.
            assert q.effective_retention() is None
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, err
        assert "lease 0.6 s, maintenance off" in out, out
    finally:
        q.close()


@pytest.mark.parametrize("lease", ["-1", "nan", "0.001", "1e300"])
def test_worker_command_refuses_a_bad_lease_with_a_typed_error(tmp_path: Path, store_url: str, lease: str) -> None:
    proc = _start(tmp_path, store_url, sys.executable, "-m", "flexiq", "worker", "--app", "cliapp:queue", "--lease", lease)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, (out, err)
    assert "INVALID_ARGUMENT" in err and "lease" in err, err


def test_worker_command_refuses_a_lease_that_is_not_a_number(tmp_path: Path, store_url: str) -> None:
    proc = _start(tmp_path, store_url, sys.executable, "-m", "flexiq", "worker", "--app", "cliapp:queue", "--lease", "soon")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "--lease" in err, err


@pytest.mark.parametrize("lease", [-1.0, float("nan"), 0.001])
def test_run_worker_refuses_a_bad_lease(queue: Queue, lease: float) -> None:
    @queue.task(name="cli.noop")
    def noop() -> None:
        return None

    with pytest.raises(InvalidArgument, match="lease"):
        queue.run_worker(lease=lease, maintenance=False)
