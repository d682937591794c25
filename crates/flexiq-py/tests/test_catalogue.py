"""The bad-input catalogue (``tests/catalogue/bad_input.json`` at the repository root) on every
store: each case that names Python is called on a queue of a shared world and must raise the
documented exception class (a :class:`flexiq.FlexiqError`, never a bare ``TypeError``,
``OverflowError`` or ``ValueError``) and leave the store as it was, compared by a snapshot
of its counts and listings taken before and after.

The world is built once per store (the calls fail before writing, so the cases can share
it, and a case that wrote would show in its own snapshot); the Rust and Node suites read the
same file, so a case added there reaches all three languages.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import flexiq
from conftest import PG_URL, REDIS_URL, STORES, _delete_redis_prefix, _drop_pg_schema
from flexiq import FlexiqError, JobFailed, Queue

CATALOGUE = json.loads(
    (Path(__file__).resolve().parents[3] / "tests" / "catalogue" / "bad_input.json").read_text()
)
CASES = [c for c in CATALOGUE["cases"] if "python" in c]
UNKNOWN_ID = "0190b6a0-0000-7000-8000-000000000000"


@dataclass
class World:
    """A store with the records the cases refer to, and the handles they are called on."""

    store: str
    queue: Queue
    other: Queue
    closed: Queue
    refs: Dict[str, Any]


def _store(kind: str, tmp: Path) -> Tuple[str, Any]:
    """A URL naming a fresh store of ``kind`` and what removes it afterwards."""
    tag = "pycat" + uuid.uuid4().hex[:10]
    if kind == "sqlite":
        return str(tmp / "catalogue.db"), lambda: None
    if kind == "postgres":
        return f"{PG_URL}?schema={tag}", lambda: _drop_pg_schema(tag)
    return f"{REDIS_URL}?prefix={tag}", lambda: _delete_redis_prefix(tag)


def _build(store: str, url: str) -> World:
    q = Queue(url=url)

    @q.task(name="cat.fail", queue="cat-dead", max_retries=0)
    def fail() -> None:
        raise RuntimeError("catalogue")

    doomed = fail.apply_async()
    with q.worker(queues=["cat-dead"], maintenance=False):
        with pytest.raises(JobFailed):
            doomed.result(timeout=30)
    dead = q.dead_letters()[0]
    job = q.enqueue("cat.task", [1], queue="cat", metadata={"n": 1})
    job2 = q.enqueue("cat.task", [2], queue="cat", metadata={"n": 2})
    cancelled = q.enqueue("cat.task", [3], queue="cat")
    assert q.cancel_job(cancelled.id)
    for sid in ("cat.sched.a", "cat.sched.b"):
        q.upsert_job_scheduler(sid, {"every_ms": 3_600_000}, {"task": "cat.task"})
    other = Queue(url=url, namespace="cat-other")
    other_job = other.enqueue("cat.task", queue="cat")
    closed = Queue(url=url)
    closed.close()
    refs = {
        "url": url,
        "job": job.id,
        "job2": job2.id,
        "cancelled_job": cancelled.id,
        "dead": dead["id"],
        "dead_job": dead["original_job_id"],
        "other_job": other_job.id,
        "jobs_cursor": q.list_jobs_after(limit=1).next_cursor,
        "schedulers_cursor": q.list_job_schedulers(limit=1).next_cursor,
        "event_id": q.last_event_id(),
        "unknown_id": UNKNOWN_ID,
    }
    assert all(v is not None for v in refs.values()), refs
    return World(store, q, other, closed, refs)


@pytest.fixture(scope="module", params=STORES)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    url, remove = _store(request.param, tmp_path_factory.mktemp("catalogue"))
    w = _build(request.param, url)
    try:
        yield w
    finally:
        w.queue.close()
        w.other.close()
        remove()


def _value(v: Any, refs: Dict[str, Any]) -> Any:
    """A catalogue value as the Python value it names."""
    if isinstance(v, list):
        return [_value(x, refs) for x in v]
    if not isinstance(v, dict):
        return v
    if "$ref" in v:
        return refs[v["$ref"]]
    if "$" in v:
        kind = v["$"]
        if kind == "nan":
            return math.nan
        if kind in ("inf", "-inf"):
            return float(kind)
        if kind == "pow2":
            return 2 ** v["exp"]
        if kind == "text":
            return v["char"] * v["len"]
        if kind == "object":
            return object()
        raise AssertionError(f"value {v} has no Python form")
    return {k: _value(x, refs) for k, x in v.items()}


def _arguments(spec: Any, refs: Dict[str, Any]) -> Tuple[List[Any], Dict[str, Any]]:
    if isinstance(spec, list):
        return _value(spec, refs), {}
    return _value(spec.get("args", []), refs), _value(spec.get("kwargs", {}), refs)


def _call(w: World, case: Dict[str, Any]) -> None:
    """Makes the case's call (which should raise)."""
    args, kwargs = _arguments(case["python"], w.refs)
    op = case["op"]
    if op == "connect":
        Queue(*args, **kwargs).close()
        return
    q = w.closed if case.get("on") == "closed" else w.queue
    if op.startswith("workflow_jobs."):
        getattr(q.workflow_jobs(), op.split(".", 1)[1])(*args, **kwargs)
    else:
        getattr(q, op)(*args, **kwargs)


def _snapshot(w: World) -> Dict[str, Any]:
    """Every count and listing a refused call must leave as it was."""
    q = w.queue
    return {
        "stats": q.stats(),
        "queues": q.stats_all_queues(),
        "jobs": q.list_jobs(limit=10_000),
        "dead": q.dead_letters(limit=10_000),
        "settings": q.list_settings(),
        "schedulers": q.list_job_schedulers(limit=10_000).items,
        "paused": q.paused_queues(),
        "revoked": q.revoked_tasks(),
        "config": q.queue_config("cat"),
        "last_event": q.last_event_id(),
        "events_enabled": q.events_enabled(),
        "other_jobs": w.other.list_jobs(limit=10_000),
    }


def _expected(case: Dict[str, Any]) -> type:
    return getattr(flexiq.exceptions, CATALOGUE["errors"][case["expect"]]["python"])


def _mentions(case: Dict[str, Any]) -> Any:
    m = case.get("mentions")
    return m.get("python") if isinstance(m, dict) else m


def _skip_reason(case: Dict[str, Any], store: Optional[str] = None) -> Any:
    """Why the case is known to fail in Python (on ``store``, when given), or ``None``."""
    failing = case.get("known_failing", {})
    return failing.get("python") or failing.get("all") or (store and failing.get(store))


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_bad_input_is_refused_and_writes_nothing(world: World, case: Dict[str, Any]) -> None:
    reason = _skip_reason(case, world.store)
    if reason:
        pytest.skip(f"known failing: {reason}")
    before = _snapshot(world)
    with pytest.raises(Exception) as raised:
        _call(world, case)
    err = raised.value
    assert isinstance(err, FlexiqError), f"{type(err).__name__} is not a FlexiqError: {err}"
    assert isinstance(err, _expected(case)), f"expected {case['expect']}, got {type(err).__name__}: {err}"
    assert err.code == case["expect"], err
    mention = _mentions(case)
    if mention is not None:
        assert mention in str(err), f"the message does not name {mention!r}: {err}"
    assert _snapshot(world) == before, "the refused call changed the store"


def test_the_catalogue_keeps_enough_live_cases() -> None:
    live = [c for c in CATALOGUE["cases"] if any(lang in c for lang in ("rust", "python", "node"))]
    live = [c for c in live if "all" not in c.get("known_failing", {})]
    assert len(live) >= 150, len(live)
    assert len([c for c in CASES if not _skip_reason(c)]) >= 150
