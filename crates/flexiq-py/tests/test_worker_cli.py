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

from flexiq import Queue
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
