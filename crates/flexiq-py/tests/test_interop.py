"""Interop: a job enqueued from Python runs on a Rust worker, and a job enqueued from Rust
runs on a Python worker (``examples/interop.rs`` is the Rust side)."""

from __future__ import annotations

import subprocess

from flexiq import Queue


def test_python_producer_rust_worker(queue: Queue, store_url: str, interop_bin: str) -> None:
    jobs = [queue.enqueue("interop.add", args=[i, 10]) for i in range(3)]
    out = subprocess.run([interop_bin, "worker", store_url, "3"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert [j.result(timeout=10) for j in jobs] == [{"sum": i + 10, "by": "rust"} for i in range(3)]


def test_rust_producer_python_worker(queue: Queue, store_url: str, interop_bin: str) -> None:
    @queue.task(name="interop.py_add")
    def py_add(a: int, b: int) -> dict:
        return {"sum": a + b, "by": "python"}

    out = subprocess.run([interop_bin, "enqueue", store_url, "4", "5"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    job_id = out.stdout.strip()
    with queue.worker(concurrency=1):
        assert queue.result(job_id, timeout=20) == {"sum": 9, "by": "python"}
