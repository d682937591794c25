"""Job schedulers: upsert_job_scheduler, get_job_scheduler, list_job_schedulers,
remove_job_scheduler and count_job_schedulers with their async twins, on every store; bad
input at each entry point raises and stores nothing; a worker's elected cleaner fires a
scheduler until its limit."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import time
from typing import Any, Callable, Dict, List
from zoneinfo import ZoneInfo

import pytest

import flexiq
from flexiq import InvalidArgument, JobScheduler, Page, Queue
from flexiq._queue.schedulers import TEMPLATE_REFUSED, SchedulerRepeat

NORMALIZED = {"limit", "start_at_ms", "end_at_ms", "immediately", "catch_up", "catch_up_max"}


def now_ms() -> int:
    return int(time.time() * 1000)


def test_the_model_and_the_repeat_type_are_public() -> None:
    assert flexiq.JobScheduler is JobScheduler and "JobScheduler" in flexiq.__all__
    assert set(SchedulerRepeat.__annotations__) == NORMALIZED | {"cron", "tz", "every_ms"}


def test_a_cron_scheduler_round_trips(queue: Queue) -> None:
    before = now_ms()
    s = queue.upsert_job_scheduler(
        "weekday-report",
        {"cron": "0 9 * * MON-FRI", "tz": "Europe/Berlin"},
        {
            "task": "report",
            "args": [1, "eu"],
            "kwargs": {"full": True},
            "queue": "reports",
            "priority": 3,
            "max_retries": 5,
            "timeout": 30,
            "retry_backoff": 2.5,
            "metadata": {"owner": "ops"},
            "group_key": "tenant-1",
        },
    )
    assert isinstance(s, JobScheduler) and s.id == "weekday-report"
    assert s.repeat == {
        "cron": "0 9 * * MON-FRI",
        "tz": "Europe/Berlin",
        "limit": None,
        "start_at_ms": None,
        "end_at_ms": None,
        "immediately": False,
        "catch_up": "latest",
        "catch_up_max": None,
    }
    assert s.template == {
        "task": "report",
        "args": [1, "eu"],
        "kwargs": {"full": True},
        "options": {
            "queue": "reports",
            "priority": 3,
            "max_retries": 5,
            "timeout": 30,
            "retry_backoff": 2.5,
            "metadata": '{"owner":"ops"}',
            "group_key": "tenant-1",
        },
    }
    assert s.iterations == 0 and s.last_run_ms is None
    assert before <= s.created_at == s.updated_at <= now_ms()
    assert s.next_run_ms is not None and s.next_run_ms > s.created_at
    berlin = dt.datetime.fromtimestamp(s.next_run_ms / 1000, ZoneInfo("Europe/Berlin"))
    assert (berlin.hour, berlin.minute, berlin.second) == (9, 0, 0) and berlin.weekday() < 5
    assert queue.get_job_scheduler("weekday-report") == s
    assert s.to_dict()["template"]["options"]["queue"] == "reports"

    # What a scheduler reports is what the upsert takes: giving it back changes no rule.
    t = s.template
    given_back = {"task": t["task"], "args": t["args"], "kwargs": t["kwargs"], **t["options"]}
    again = queue.upsert_job_scheduler(s.id, s.repeat, given_back)
    assert (again.repeat, again.template, again.next_run_ms) == (s.repeat, s.template, s.next_run_ms)
    assert again.created_at == s.created_at and again.updated_at >= s.updated_at
    assert queue.count_job_schedulers() == 1


def test_a_cron_pattern_without_a_zone_is_read_in_utc(queue: Queue) -> None:
    s = queue.upsert_job_scheduler("utc", {"cron": "30 6 * * *"}, {"task": "t"})
    assert s.repeat["tz"] is None and "every_ms" not in s.repeat
    at = dt.datetime.fromtimestamp(s.next_run_ms / 1000, dt.timezone.utc)
    assert (at.hour, at.minute) == (6, 30)
    assert s.template == {"task": "t", "args": [], "kwargs": {}, "options": {}}


def test_an_every_scheduler_takes_every_rule_option(queue: Queue) -> None:
    start = now_ms() + 3_600_000
    s = queue.upsert_job_scheduler(
        "every",
        {
            "every_ms": 60_000,
            "limit": 10,
            "start_at_ms": start,
            "end_at_ms": start + 86_400_000,
            "immediately": True,
            "catch_up": "all",
            "catch_up_max": 7,
        },
        {"task": "tick"},
    )
    assert s.repeat == {
        "every_ms": 60_000,
        "limit": 10,
        "start_at_ms": start,
        "end_at_ms": start + 86_400_000,
        "immediately": True,
        "catch_up": "all",
        "catch_up_max": 7,
    }
    assert s.next_run_ms == start  # immediately: at the start
    plain = queue.upsert_job_scheduler("plain", {"every_ms": 1_000, "catch_up": "all"}, {"task": "tick"})
    assert plain.repeat["catch_up_max"] == 100 and "tz" not in plain.repeat
    assert plain.next_run_ms == plain.created_at + 1_000
    now = queue.upsert_job_scheduler(
        "now", {"every_ms": 1_000, "immediately": True, "catch_up": "none"}, {"task": "tick"}
    )
    assert now.next_run_ms == now.created_at and now.repeat["catch_up"] == "none"
    # None is as good as absent for every optional key
    nones = queue.upsert_job_scheduler(
        "nones",
        {
            "every_ms": 5,
            "tz": None,
            "cron": None,
            "limit": None,
            "immediately": None,
            "catch_up": None,
            "catch_up_max": None,
        },
        {"task": "tick", "queue": None, "delay": None, "args": [], "kwargs": None},
    )
    assert nones.repeat["catch_up"] == "latest" and nones.template["options"] == {}


def test_upsert_replaces_the_rule_and_template_and_keeps_the_record(queue: Queue) -> None:
    first = queue.upsert_job_scheduler("r", {"every_ms": 60_000}, {"task": "a", "args": [1]})
    second = queue.upsert_job_scheduler("r", {"cron": "0 0 1 1 *"}, {"task": "b", "kwargs": {"x": 2}, "priority": 9})
    assert queue.count_job_schedulers() == 1
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at
    assert second.repeat["cron"] == "0 0 1 1 *" and "every_ms" not in second.repeat
    assert second.template == {"task": "b", "args": [], "kwargs": {"x": 2}, "options": {"priority": 9}}
    assert queue.get_job_scheduler("r") == second


def test_a_task_object_template_takes_the_task_defaults(queue: Queue) -> None:
    @queue.task(name="sched.defaults", queue="slow", priority=4, timeout=12, max_retries=1)
    def job(x: int) -> int:
        return x

    s = queue.upsert_job_scheduler("t", {"every_ms": 60_000}, {"task": job, "args": [3], "priority": 8})
    assert s.template["task"] == "sched.defaults" and s.template["args"] == [3]
    assert s.template["options"] == {"queue": "slow", "priority": 8, "timeout": 12, "max_retries": 1}


def test_the_template_payload_uses_the_queue_serializer(store_url: str) -> None:
    q = Queue(url=store_url, serializer="pickle")
    try:
        template = {"task": "t", "args": [{1, 2}], "kwargs": {"when": dt.date(2026, 1, 2)}}
        s = q.upsert_job_scheduler("p", {"every_ms": 60_000}, template)
        assert s.template["args"] == [{1, 2}] and s.template["kwargs"] == {"when": dt.date(2026, 1, 2)}
    finally:
        q.close()


def test_list_pages_by_id_and_refuses_a_garbage_cursor(queue: Queue) -> None:
    ids = ["s3", "s0", "s4", "s1", "s2"]
    for i in ids:
        queue.upsert_job_scheduler(i, {"every_ms": 60_000}, {"task": "t", "args": [i]})
    first = queue.list_job_schedulers(limit=2)
    assert isinstance(first, Page) and [s.id for s in first] == ["s0", "s1"]
    assert all(isinstance(s, JobScheduler) for s in first.items) and first.items[0].template["args"] == ["s0"]
    seen: List[str] = []
    page = first
    while True:
        seen += [s.id for s in page.items]
        if page.next_cursor is None:
            break
        page = queue.list_job_schedulers(limit=2, after=page.next_cursor)
    assert seen == sorted(ids)
    everything = queue.list_job_schedulers()
    assert [s.id for s in everything] == sorted(ids) and everything.next_cursor is None
    queue.enqueue("t")
    queue.enqueue("t")
    job_cursor = queue.list_jobs_after(limit=1).next_cursor
    assert job_cursor is not None
    for bad in ("garbage!", "", job_cursor):
        with pytest.raises(InvalidArgument):
            queue.list_job_schedulers(limit=2, after=bad)
    for limit in (0, -1, 10_001):
        with pytest.raises(InvalidArgument):
            queue.list_job_schedulers(limit=limit)
    for limit in ("2", 2.0, True):
        with pytest.raises(TypeError):
            queue.list_job_schedulers(limit=limit)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        queue.list_job_schedulers(after=5)  # type: ignore[arg-type]


def test_an_empty_namespace_lists_and_counts_nothing(queue: Queue) -> None:
    assert queue.list_job_schedulers().items == [] and queue.list_job_schedulers().next_cursor is None
    assert queue.count_job_schedulers() == 0
    assert queue.get_job_scheduler("none") is None
    assert queue.remove_job_scheduler("none") is False


def test_remove_and_count(queue: Queue) -> None:
    for i in range(3):
        queue.upsert_job_scheduler(f"c{i}", {"every_ms": 60_000}, {"task": "t"})
    assert queue.count_job_schedulers() == 3
    assert queue.remove_job_scheduler("c1") is True
    assert queue.remove_job_scheduler("c1") is False
    assert queue.get_job_scheduler("c1") is None
    assert queue.count_job_schedulers() == 2
    assert [s.id for s in queue.list_job_schedulers()] == ["c0", "c2"]


BAD_REPEATS: List[Any] = [
    ({"cron": "not a cron"}, "not a cron"),
    ({"cron": "61 * * * *"}, "61"),
    ({"cron": "0 9 * * *", "tz": "Mars/Olympus_Mons"}, "Mars/Olympus_Mons"),
    ({}, "cron"),
    ({"limit": 3}, "every_ms"),
    ({"cron": "* * * * *", "every_ms": 1000}, "not both"),
    ({"every_ms": 1000, "tz": "UTC"}, "tz"),
    ({"every_ms": 1000, "every": 5}, "'every'|\"every\""),
    ({"every_ms": 0}, "every_ms 0"),
    ({"every_ms": -5}, "every_ms -5"),
    ({"every_ms": True}, "every_ms must be an integer, not bool"),
    ({"every_ms": "1000"}, "every_ms must be an integer, not str"),
    ({"every_ms": 1.5}, "every_ms must be an integer, not float"),
    ({"every_ms": 2**70}, "out of range"),
    ({"cron": 5}, "cron must be a string, not int"),
    ({"cron": "* * * * *", "tz": 1}, "tz must be a string"),
    ({"every_ms": 1000, "limit": 0}, "limit 0"),
    ({"every_ms": 1000, "limit": True}, "limit must be an integer, not bool"),
    ({"every_ms": 1000, "start_at_ms": "2026-01-01"}, "start_at_ms must be an integer, not str"),
    ({"every_ms": 1000, "end_at_ms": 1.0}, "end_at_ms must be an integer, not float"),
    ({"every_ms": 1000, "start_at_ms": -1}, "start_at_ms"),
    ({"every_ms": 1000, "start_at_ms": 2_000, "end_at_ms": 1_000}, "end_at_ms"),
    ({"every_ms": 1000, "immediately": 1}, "immediately must be a bool, not int"),
    ({"every_ms": 1000, "immediately": "yes"}, "immediately must be a bool"),
    ({"every_ms": 1000, "catch_up": "some"}, "some"),
    ({"every_ms": 1000, "catch_up": True}, "catch_up must be a string"),
    ({"every_ms": 1000, "catch_up_max": 5}, "catch_up_max applies"),
    ({"every_ms": 1000, "catch_up": "latest", "catch_up_max": 5}, "catch_up_max applies"),
    ({"every_ms": 1000, "catch_up": "all", "catch_up_max": 0}, "catch_up_max 0"),
    ({"every_ms": 1000, "catch_up": "all", "catch_up_max": 1001}, "catch_up_max 1001"),
    ({"every_ms": 1000, "catch_up": "all", "catch_up_max": False}, "catch_up_max must be an integer, not bool"),
    ({"every_ms": 1000, 5: 1}, "keys must be strings"),
    ("every minute", "repeat must be a dict, not str"),
    ([("every_ms", 1000)], "repeat must be a dict, not list"),
]


def test_a_bad_repeat_is_invalid_argument_and_stores_nothing(queue: Queue) -> None:
    for repeat, says in BAD_REPEATS:
        with pytest.raises(InvalidArgument, match=says) as e:
            queue.upsert_job_scheduler("bad-repeat", repeat, {"task": "t"})
        assert "bad-repeat" in str(e.value), repeat
    assert queue.count_job_schedulers() == 0 and queue.get_job_scheduler("bad-repeat") is None


def test_a_bad_template_is_invalid_argument_naming_the_option(queue: Queue) -> None:
    refused: List[Dict[str, Any]] = [
        {"delay": 5},
        {"eta": 1_900_000_000},
        {"unique_key": "k"},
        {"dedup": {"id": "d"}},
        {"depends_on": ["0190b1e2-0000-7000-8000-000000000000"]},
        {"lifo": True},
    ]
    assert [next(iter(r)) for r in refused] == list(TEMPLATE_REFUSED)
    for option in refused:
        name = next(iter(option))
        with pytest.raises(InvalidArgument, match=f"cannot set {name}") as e:
            queue.upsert_job_scheduler("bad-template", {"every_ms": 1000}, {"task": "t", **option})
        assert "bad-template" in str(e.value)
    for key in ("countdown", "workflow_run_id", "workflow_stage_id", "payload", "options"):
        with pytest.raises(InvalidArgument, match=f"unknown keys \\['{key}'\\]"):
            queue.upsert_job_scheduler("bad-template", {"every_ms": 1000}, {"task": "t", key: "x"})
    for template, says in [
        ({}, "needs a task name or Task, not NoneType"),
        ({"task": 5}, "needs a task name or Task, not int"),
        ({"task": ""}, "task"),
        ({"task": "t", "args": "ab"}, "args must be a list or tuple"),
        ({"task": "t", "kwargs": [1]}, "kwargs must be a dict"),
        ({"task": "t", "args": [object()]}, "not JSON serializable"),
        ({"task": "t", "priority": "high"}, "priority must be an integer"),
        ({"task": "t", "max_retries": True}, "max_retries must be an integer"),
        ({"task": "t", "timeout": -1}, "timeout"),
        ({"task": "t", "timeout": "1s"}, "timeout must be a number of seconds"),
        ({"task": "t", "queue": 3}, "queue must be a string"),
        ({"task": "t", "metadata": "[1]"}, "metadata"),
        ({"task": "t", "metadata": 5}, "metadata must be a dict or JSON text"),
        ("t", "template must be a dict, not str"),
        (None, "template must be a dict, not NoneType"),
    ]:
        with pytest.raises(InvalidArgument, match=says):
            queue.upsert_job_scheduler("bad-template", {"every_ms": 1000}, template)
    assert queue.count_job_schedulers() == 0 and queue.list_job_schedulers().items == []


def test_a_bad_scheduler_id_is_refused_at_every_entry_point(queue: Queue) -> None:
    for bad in ("", "a\nb", "x" * 10_000):
        with pytest.raises(InvalidArgument, match="scheduler id"):
            queue.upsert_job_scheduler(bad, {"every_ms": 1000}, {"task": "t"})
        with pytest.raises(InvalidArgument, match="scheduler id"):
            queue.get_job_scheduler(bad)
        with pytest.raises(InvalidArgument, match="scheduler id"):
            queue.remove_job_scheduler(bad)
    with pytest.raises(InvalidArgument, match="scheduler_id must be a string"):
        queue.upsert_job_scheduler(7, {"every_ms": 1000}, {"task": "t"})  # type: ignore[arg-type]
    for call in (queue.get_job_scheduler, queue.remove_job_scheduler):
        with pytest.raises(TypeError):
            call(7)  # type: ignore[arg-type]
    assert queue.count_job_schedulers() == 0


def test_the_native_call_checks_its_dicts_too(queue: Queue) -> None:
    native = queue._native
    for template, says in [
        ({"task": "t", "payload": "text"}, "payload must be bytes"),
        ({"task": "t", "options": [1]}, "options must be a dict"),
        ({"task": "t", "payload": b"{}", "extra": 1}, "unknown template key"),
        ({"payload": b"{}"}, "needs a task name"),
        ({"task": "t", "options": {"delay_ms": 5}}, "cannot set delay"),
        ({"task": "t", "options": {"run_at": 5}}, "cannot set run_at"),
        ({"task": "t", "options": {"lifo": True}}, "cannot set lifo"),
        ({"task": "t", "options": {"unique_key": "k"}}, "cannot set unique_key"),
        ({"task": "t", "options": {"priority": "x"}}, "scheduler n: template: enqueue option priority"),
    ]:
        with pytest.raises(InvalidArgument, match=says):
            native.upsert_job_scheduler("n", {"every_ms": 1000}, template)
    with pytest.raises(TypeError):
        native.upsert_job_scheduler("n", [("every_ms", 1)], {"task": "t"})  # type: ignore[arg-type]
    assert native.count_job_schedulers() == 0
    raw = native.upsert_job_scheduler("n", {"every_ms": 1000}, {"task": "t", "payload": b"\x00raw"})
    assert raw["template"] == {"task": "t", "payload": b"\x00raw", "options": {}}


def test_async_twins(queue: Queue) -> None:
    async def main() -> None:
        s = await queue.aupsert_job_scheduler("a1", {"every_ms": 60_000}, {"task": "t", "args": [1]})
        await queue.aupsert_job_scheduler("a2", {"cron": "*/5 * * * *"}, {"task": "t"})
        assert await queue.aget_job_scheduler("a1") == s
        assert await queue.aget_job_scheduler("zz") is None
        page = await queue.alist_job_schedulers(limit=1)
        assert [x.id for x in page] == ["a1"] and page.next_cursor is not None
        rest = await queue.alist_job_schedulers(limit=1, after=page.next_cursor)
        assert [x.id for x in rest] == ["a2"]
        assert await queue.acount_job_schedulers() == 2
        assert await queue.aremove_job_scheduler("a2") is True
        assert await queue.aremove_job_scheduler("a2") is False
        assert await queue.acount_job_schedulers() == 1
        with pytest.raises(InvalidArgument):
            await queue.aupsert_job_scheduler("a3", {"every_ms": 1000}, {"task": "t", "eta": 5})
        with pytest.raises(InvalidArgument):
            await queue.alist_job_schedulers(after="garbage!")
        assert await queue.acount_job_schedulers() == 1

    asyncio.run(main())


def test_a_worker_fires_a_scheduler_exactly_up_to_its_limit(queue: Queue, until: Callable[..., None]) -> None:
    runs: List[Any] = []
    lock = threading.Lock()

    @queue.task(name="sched.tick")
    def tick(n: int, tag: str = "") -> None:
        with lock:
            runs.append((n, tag))

    s = queue.upsert_job_scheduler(
        "ticker", {"every_ms": 100, "limit": 3}, {"task": "sched.tick", "args": [7], "kwargs": {"tag": "x"}}
    )
    assert s.next_run_ms is not None and s.iterations == 0
    # A worker runs maintenance by default; its elected cleaner fires the due slots.
    with queue.worker(concurrency=2):
        until(lambda: len(runs) >= 3, timeout=60, what="three scheduled runs")
        until(lambda: queue.get_job_scheduler("ticker").next_run_ms is None, timeout=60, what="the limit")
    done = queue.get_job_scheduler("ticker")
    assert done is not None and done.iterations == 3 and done.next_run_ms is None
    assert done.last_run_ms is not None and done.last_run_ms >= s.next_run_ms
    # Its rule has no slot left, so nothing more can fire: exactly three runs.
    assert runs == [(7, "x")] * 3
    jobs = queue.list_jobs(task="sched.tick")
    assert len(jobs) == 3 and {j.status for j in jobs} == {"completed"}
    slots = sorted(int(j.unique_key.rsplit(":", 1)[1]) for j in jobs)
    assert [j.unique_key for j in sorted(jobs, key=lambda j: j.run_at)] == [f"scheduler:ticker:{t}" for t in slots]
    assert sorted(j.run_at for j in jobs) == slots and slots[-1] == done.last_run_ms
    # each slot's job carries the payload enqueue writes for the same call
    assert {j.payload for j in jobs} == {queue.serializer.dumps_call((7,), {"tag": "x"})}
