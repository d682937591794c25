"""Retention: effective_retention (what a worker's cleaner applied) and dry_run_retention.
Configured windows are seconds; everything reported back is milliseconds."""

from __future__ import annotations

import pytest

from flexiq import EffectiveRetention, InvalidArgument, Queue, Retention, RetentionPreview

TABLES = {"archived_jobs", "dead_letter", "task_logs", "task_metrics", "job_errors"}


def test_dry_run_defaults_and_candidates(queue: Queue) -> None:
    p = queue.dry_run_retention()
    assert isinstance(p, RetentionPreview)
    assert p.defaulted is True and p.enabled is True and p.namespace == "default"
    assert set(p.windows) == TABLES and set(p.counts) == TABLES and p.total == 0
    assert p.windows["task_logs"] == 7 * 86400 * 1000  # reported in ms
    c = queue.dry_run_retention(Retention(task_logs=60))
    assert c.defaulted is False and c.windows["task_logs"] == 60_000 and c.windows["dead_letter"] is None
    assert queue.dry_run_retention({"job_errors": 5}).windows["job_errors"] == 5000
    off = queue.dry_run_retention(Retention())
    assert off.enabled is False
    for bad in ({"nope": 1}, {"task_logs": 0}, {"task_logs": -5}, "x"):
        with pytest.raises(InvalidArgument):
            queue.dry_run_retention(bad)  # type: ignore[arg-type]


def test_effective_retention_is_published_by_a_worker(store_url: str, until) -> None:  # type: ignore[no-untyped-def]
    q = Queue(url=store_url, retention=Retention(task_logs=120, dead_letter=3600))
    try:
        assert q.effective_retention() is None

        @q.task(name="noop")
        def noop() -> None:
            return None

        with q.worker(concurrency=1):
            until(lambda: q.effective_retention() is not None, timeout=30, what="a retention sweep")
        e = q.effective_retention()
        assert isinstance(e, EffectiveRetention)
        assert e.enabled and not e.defaulted and e.namespace == "default"
        assert e.windows["task_logs"] == 120_000 and e.windows["dead_letter"] == 3_600_000
        assert e.reported_at > 1_600_000_000_000
        assert q.dry_run_retention().windows["task_logs"] == 120_000
    finally:
        q.close()
