"""The workflow job view (``Queue.workflow_jobs``) on every store: stages replaced in place by
(run, stage), fenced acks, suspend / defer, the two lease tiers, the run-wide calls, fairness,
bad input, the async twins, and a host loop in two processes sharing one store."""

from __future__ import annotations

import asyncio
import datetime as dt
import inspect
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from flexiq import Dequeued, Fence, InvalidArgument, JobNotFound, NotFound, Queue, WorkflowJob, WorkflowJobs

UTC = dt.timezone.utc
MISSING = "01a23804-0000-7000-8000-000000000000"  # a job id no job carries


def stage(run: str, stage_id: str, workflow: str = "order", **extra: Any) -> Dict[str, Any]:
    return {"workflow_run_id": run, "workflow_id": workflow, "stage_id": stage_id, "payload": {"stage": stage_id}, **extra}


def claim(wf: WorkflowJobs, **kw: Any) -> Dequeued:
    got = wf.dequeue(**kw)
    assert got is not None, "nothing to dequeue"
    return got


def by_stage(wf: WorkflowJobs, run: str) -> Dict[str, WorkflowJob]:
    return {j.stage_id: j for j in wf.get_jobs_by_workflow_run(run)}


def test_the_view_and_its_worker_id(queue: Queue) -> None:
    wf = queue.workflow_jobs()
    assert (wf.queue_name, wf.fairness_group_by, wf.fairness_cap) == ("workflow", None, None)
    assert wf.worker_id != ""
    # a view without its own id adopts the host's; one configured keeps its own
    assert wf.adopt_worker_id("host-7") == "host-7" and wf.worker_id == "host-7"
    own = queue.workflow_jobs(fairness_group_by="tenant.id", fairness_cap=2, worker_id="mine", queue="wf2")
    assert own.adopt_worker_id("host-7") == "mine" and own.worker_id == "mine"
    assert (own.queue_name, own.fairness_group_by, own.fairness_cap) == ("wf2", "tenant.id", 2)
    assert "tenant.id" in repr(own)
    assert own.dequeue() is None


def test_enqueue_dequeue_and_fenced_complete(queue: Queue) -> None:
    wf = queue.workflow_jobs(worker_id="host-a")
    later = dt.datetime.now(UTC) + dt.timedelta(hours=1)
    ids = wf.enqueue_parallel(
        [
            stage("run-1", "charge", definition_version="v2", priority=5, max_attempts=4),
            stage("run-1", "ship", next_poll_at=later),
        ]
    )
    assert len(ids) == 2 and len(set(ids)) == 2
    jobs = by_stage(wf, "run-1")
    charge, ship = jobs["charge"], jobs["ship"]
    assert (charge.id, charge.status, charge.attempt, charge.max_attempts) == (ids[0], "pending", 0, 4)
    assert (charge.workflow_id, charge.definition_version, charge.queue) == ("order", "v2", "workflow")
    assert charge.payload == {"stage": "charge"} and charge.worker_id is None and charge.locked_at is None
    assert charge.created_at.tzinfo is not None and charge.next_poll_at.tzinfo is not None
    assert abs(ship.next_poll_at - later) < dt.timedelta(milliseconds=2) and ship.max_attempts == 3
    # the stages are ordinary jobs of the "workflow" queue
    plain = queue.get_job(ids[0])
    assert plain is not None and (plain.task, plain.queue, plain.workflow_run_id) == ("order", "workflow", "run-1")
    assert {j.id for j in queue.list_jobs(queue="workflow")} == set(ids)

    got = claim(wf)
    assert isinstance(got, Dequeued) and got.job.id == ids[0]  # "ship" is not due yet
    assert (got.job.status, got.job.attempt, got.job.worker_id) == ("running", 1, "host-a")
    assert got.job.locked_at is not None and got.job.started_at is not None
    assert got.fence == Fence(ids[0], 1, got.fence.started_at, got.fence.claim_seq)
    assert wf.dequeue() is None
    assert wf.complete(ids[0], got.fence) == "acknowledged"
    assert wf.complete(ids[0], got.fence) == "superseded"  # that attempt no longer runs
    assert wf.complete(ids[0]) == "acknowledged"  # unfenced: unconditional, changes nothing now
    assert by_stage(wf, "run-1")["charge"].status == "completed"
    with pytest.raises(JobNotFound):
        wf.complete(MISSING)


def test_enqueue_parallel_replaces_a_stage_in_place(queue: Queue) -> None:
    wf = queue.workflow_jobs()
    (first,) = wf.enqueue_parallel([stage("run-r", "s1")])
    got = claim(wf)
    # re-enqueueing the pair while it runs resets the row; the running attempt is superseded
    (again,) = wf.enqueue_parallel([dict(stage("run-r", "s1"), payload={"v": 2})])
    assert again == first
    j = by_stage(wf, "run-r")["s1"]
    assert (j.status, j.attempt, j.worker_id, j.payload) == ("pending", 0, None, {"v": 2})
    assert wf.complete(first, got.fence) == "superseded"
    got2 = claim(wf)
    assert got2.fence != got.fence and wf.complete(first, got2.fence) == "acknowledged"
    # a completed row is replaced too
    assert wf.enqueue_parallel([stage("run-r", "s1")]) == [first]
    assert by_stage(wf, "run-r")["s1"].status == "pending"
    assert len(wf.get_jobs_by_workflow_run("run-r")) == 1


def test_fail_suspend_and_defer(queue: Queue) -> None:
    wf = queue.workflow_jobs()
    # one workflow per stage, so each claim picks its stage by `serves` whatever the timing
    wf.enqueue_parallel([stage("run-f", s, workflow=f"wf-{s}") for s in ("final", "retry", "suspend", "defer")])
    got = claim(wf, serves=["wf-final"])
    assert wf.fail(got.job.id, "boom", fence=got.fence) == "acknowledged"  # no retry by default
    j = by_stage(wf, "run-f")["final"]
    assert j.status in ("failed", "dead") and j.last_error == "boom"

    got = claim(wf, serves=["wf-retry"])
    assert wf.fail(got.job.id, "flaky", True, got.fence) == "acknowledged"
    j = by_stage(wf, "run-f")["retry"]
    assert (j.status, j.attempt, j.last_error) == ("pending", 1, "flaky")

    got = claim(wf, serves=["wf-suspend"])
    poll = dt.datetime.now(UTC) + dt.timedelta(hours=1)
    assert wf.suspend(got.job.id, poll, got.fence) == "acknowledged"
    j = by_stage(wf, "run-f")["suspend"]
    assert j.status == "suspended" and abs(j.next_poll_at - poll) < dt.timedelta(milliseconds=2)
    assert wf.suspend(got.job.id, poll, got.fence) == "superseded"

    got = claim(wf, serves=["wf-defer"])
    for _ in range(5):  # declining never spends the attempt budget
        assert wf.defer(got.job.id, time.time() - 1.0, "pinned to v9", got.fence) == "acknowledged"
        got = claim(wf, serves=["wf-defer"])
        assert got.job.attempt == 1
    assert wf.defer(got.job.id, time.time() + 3600.0, "pinned to v9", got.fence) == "acknowledged"
    j = by_stage(wf, "run-f")["defer"]
    assert (j.status, j.attempt) == ("pending", 0) and "pinned to v9" in (j.last_error or "")
    # a job that is not running: an unfenced ack changes nothing and is acknowledged
    assert wf.fail(j.id, "late") == "acknowledged" and by_stage(wf, "run-f")["defer"].status == "pending"


def test_serves_and_queues_filter_the_claim(queue: Queue) -> None:
    wf = queue.workflow_jobs()
    other = queue.workflow_jobs(queue="wf-other")
    wf.enqueue_parallel([stage("run-s", "a", workflow="billing", definition_version="v1")])
    other.enqueue_parallel([stage("run-s", "b", workflow="billing", definition_version="v2")])
    assert wf.dequeue(serves=["shipping"]) is None
    assert wf.dequeue(serves=[("billing", "v2")]) is None  # v2 lives on the other queue
    assert wf.dequeue(serves=[{"workflow_id": "billing", "definition_version": "v3"}]) is None
    got = claim(wf, serves=[{"workflow_id": "billing", "definition_version": "v1"}])
    assert got.job.stage_id == "a"
    got = claim(wf, serves=[("billing", None)], queues=["wf-other"])
    assert (got.job.stage_id, got.job.queue, got.job.definition_version) == ("b", "wf-other", "v2")


def test_the_two_lease_tiers(queue: Queue) -> None:
    wf = queue.workflow_jobs()
    wf.enqueue_parallel([stage("run-l", "stale"), stage("run-l", "wedged")])
    got = claim(wf)
    time.sleep(0.3)
    assert wf.release_stale_jobs(60_000) == 0
    assert wf.release_stale_jobs(100) == 1
    j = by_stage(wf, "run-l")["stale"]
    assert j.status == "pending" and (j.last_error or "").startswith("LEASE_HEARTBEAT_LOST")
    assert wf.complete(got.job.id, got.fence) == "superseded"

    claims = {d.job.stage_id: d for d in (claim(wf), claim(wf))}
    stale, wedged = claims["stale"], claims["wedged"]
    wf.complete(stale.job.id, stale.fence)
    time.sleep(0.3)
    wf.touch_job(wedged.job.id)  # alive but wedged: it keeps heartbeating
    assert wf.release_stale_jobs(200) == 0
    assert wf.expire_runaway_jobs(60_000) == 0
    assert wf.expire_runaway_jobs(100) == 1
    j = by_stage(wf, "run-l")["wedged"]
    assert (j.last_error or "").startswith("LEASE_ABSOLUTE_CAP") and j.status != "running"
    assert wf.complete(wedged.job.id, wedged.fence) == "superseded"
    wf.touch_job(wedged.job.id)  # not running any more: nothing happens
    with pytest.raises(NotFound):
        wf.touch_job(MISSING)


def test_run_wide_cancel_delete_and_listing(queue: Queue) -> None:
    wf = queue.workflow_jobs()
    ids = wf.enqueue_parallel([stage("run-x", s) for s in ("done", "running", "waiting", "later")])
    wf.enqueue_parallel([stage("run-y", "kept")])
    assert [j.id for j in wf.get_jobs_by_workflow_run("run-x")] == ids  # oldest first
    done = claim(wf)
    wf.complete(done.job.id, done.fence)
    running = claim(wf)
    assert wf.cancel_by_run("run-x") == 2
    jobs = by_stage(wf, "run-x")
    assert [jobs[s].status for s in ("done", "running", "waiting", "later")] == [
        "completed",
        "running",
        "cancelled",
        "cancelled",
    ]
    assert wf.cancel_by_run("run-x") == 0
    assert wf.delete_by_run_and_stages("run-x", []) == 0
    assert wf.delete_by_run_and_stages("run-x", ["running", "done", "nope"]) == 2
    assert sorted(by_stage(wf, "run-x")) == ["later", "waiting"]
    assert wf.complete(running.job.id, running.fence) == "superseded"  # its row is gone
    assert queue.get_job(running.job.id) is None
    assert [j.stage_id for j in wf.get_jobs_by_workflow_run("run-y")] == ["kept"]
    assert wf.get_jobs_by_workflow_run("run-none") == []


def test_fairness_serves_every_group_under_the_cap(queue: Queue) -> None:
    wf = queue.workflow_jobs(fairness_group_by="tenant.id", fairness_cap=1)
    specs = [stage("run-big", f"s{i}", payload={"tenant": {"id": "big"}}) for i in range(20)]
    specs.append(stage("run-small", "s0", payload={"tenant": {"id": "small"}}))
    specs.append(stage("run-none", "s0", payload={"no": "tenant"}))  # the default group
    wf.enqueue_parallel(specs)
    first = [claim(wf) for _ in range(3)]
    assert sorted((d.job.group_key or "") for d in first) == ["", "big", "small"]
    assert wf.dequeue() is None  # every group is at its cap
    big = next(d for d in first if d.job.group_key == "big")
    wf.complete(big.job.id, big.fence)
    nxt = claim(wf)
    assert nxt.job.group_key == "big"


def test_bad_input_is_refused_and_writes_nothing(queue: Queue) -> None:
    wf = queue.workflow_jobs()
    bad_views: List[Dict[str, Any]] = [
        {"fairness_cap": 0},
        {"fairness_cap": -1},
        {"fairness_group_by": "a..b"},
        {"fairness_group_by": ""},
        {"queue": ""},
    ]
    for kw in bad_views:
        with pytest.raises(InvalidArgument):
            queue.workflow_jobs(**kw)
    for kw in ({"fairness_cap": "2"}, {"fairness_cap": True}, {"fairness_group_by": 3}, {"worker_id": 1}):
        with pytest.raises(TypeError):
            queue.workflow_jobs(**kw)

    good = stage("run-b", "ok")
    bad_batches: List[Any] = [
        [good, stage("run-b", "")],
        [good, stage("", "s")],
        [good, dict(good)],  # the same pair twice
        [good, dict(stage("run-b", "x"), payload={1, 2})],
        [good, dict(stage("run-b", "x"), next_poll_at="tomorrow")],
        [good, dict(stage("run-b", "x"), next_poll_at=dt.datetime(2030, 1, 1))],  # naive
        [good, dict(stage("run-b", "x"), next_poll_at=-5.0)],
        [good, dict(stage("run-b", "x"), max_attempts=0)],
        [good, dict(stage("run-b", "x"), priority="high")],
        [good, dict(stage("run-b", "x"), colour="red")],
        [good, {"workflow_run_id": "run-b", "stage_id": "x", "payload": {}}],
        [good, "not a dict"],
    ]
    for batch in bad_batches:
        with pytest.raises(InvalidArgument):
            wf.enqueue_parallel(batch)
    with pytest.raises(InvalidArgument, match="job 1"):
        wf.enqueue_parallel([good, stage("run-b", "")])
    with pytest.raises(TypeError):
        wf.enqueue_parallel(good)  # type: ignore[arg-type]
    assert wf.get_jobs_by_workflow_run("run-b") == [] and queue.stats()["pending"] == 0

    (job_id,) = wf.enqueue_parallel([good])
    (other_id,) = wf.enqueue_parallel([stage("run-b", "other")])
    got = claim(wf)
    assert got.job.id == job_id
    with pytest.raises(InvalidArgument, match=other_id):
        wf.complete(other_id, got.fence)  # the fence of another job
    with pytest.raises(InvalidArgument):
        wf.fail(other_id, "x", False, got.fence)
    with pytest.raises(InvalidArgument):
        wf.suspend(other_id, time.time(), got.fence)
    with pytest.raises(InvalidArgument):
        wf.defer(other_id, time.time(), "x", got.fence)
    for when in ("soon", None, dt.datetime(2030, 1, 1), float("nan"), -1):
        with pytest.raises(InvalidArgument):
            wf.suspend(job_id, when, got.fence)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        wf.defer(job_id, "soon", "x", got.fence)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        wf.complete(job_id, (job_id, 1, 2, 3))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        wf.complete(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        wf.fail(job_id, "x", "yes")  # type: ignore[arg-type]
    for threshold in (0, -1):
        with pytest.raises(InvalidArgument):
            wf.release_stale_jobs(threshold)
        with pytest.raises(InvalidArgument):
            wf.expire_runaway_jobs(threshold)
    with pytest.raises(TypeError):
        wf.release_stale_jobs(1.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        wf.release_stale_jobs(2**70)
    with pytest.raises(InvalidArgument):
        wf.cancel_by_run("")
    with pytest.raises(InvalidArgument):
        wf.delete_by_run_and_stages("run-b", [""])
    with pytest.raises(TypeError):
        wf.delete_by_run_and_stages("run-b", "ok")
    with pytest.raises(InvalidArgument):
        wf.dequeue(serves=[{"workflow_id": ""}])
    with pytest.raises(InvalidArgument):
        wf.dequeue(serves=[{"version": "v1"}])
    with pytest.raises(TypeError):
        wf.dequeue(serves="order")
    with pytest.raises(TypeError):
        wf.dequeue(queues="workflow")
    with pytest.raises(InvalidArgument):
        wf.dequeue(queues=[""])
    with pytest.raises(InvalidArgument):
        wf.adopt_worker_id("")
    # nothing of it was written: the job still runs under its fence
    assert by_stage(wf, "run-b")["ok"].status == "running"
    assert wf.complete(job_id, got.fence) == "acknowledged"


def test_every_blocking_call_has_an_async_twin(queue: Queue) -> None:
    public = {n: getattr(WorkflowJobs, n) for n in dir(WorkflowJobs) if not n.startswith("_")}
    blocking = [n for n, v in public.items() if inspect.isfunction(v) and not inspect.iscoroutinefunction(v)]
    assert "dequeue" in blocking and "adopt_worker_id" in blocking
    assert [n for n in blocking if n != "adopt_worker_id" and "a" + n not in public] == []
    assert "aadopt_worker_id" not in public and "aworkflow_jobs" not in dir(Queue)
    for n in blocking:
        if n != "adopt_worker_id":
            twin = public["a" + n]
            assert inspect.iscoroutinefunction(twin)
            assert inspect.signature(twin) == inspect.signature(public[n])


def test_async_twins_drive_a_host(queue: Queue) -> None:
    wf = queue.workflow_jobs(fairness_group_by="tenant", fairness_cap=2)

    async def main() -> None:
        ids = await wf.aenqueue_parallel([stage("run-a", s, payload={"tenant": "t"}) for s in ("a", "b", "c")])
        assert len(ids) == 3
        got = await wf.adequeue()
        assert got is not None and got.job.group_key == "t"
        await wf.atouch_job(got.job.id)
        assert await wf.acomplete(got.job.id, got.fence) == "acknowledged"
        got = await wf.adequeue(serves=["order"])
        assert got is not None
        assert await wf.asuspend(got.job.id, time.time() + 3600, got.fence) == "acknowledged"
        got = await wf.adequeue()
        assert got is not None
        assert await wf.adefer(got.job.id, time.time() + 3600, "later", got.fence) == "acknowledged"
        assert await wf.adequeue() is None
        assert await wf.arelease_stale_jobs(60_000) == 0
        assert await wf.aexpire_runaway_jobs(60_000) == 0
        assert await wf.acancel_by_run("run-a") == 2
        assert await wf.adelete_by_run_and_stages("run-a", ["a"]) == 1
        jobs = await wf.aget_jobs_by_workflow_run("run-a")
        assert [j.status for j in jobs] == ["cancelled", "cancelled"]
        (i,) = await wf.aenqueue_parallel([stage("run-a", "d")])
        got = await wf.adequeue()
        assert got is not None and got.job.id == i
        assert await wf.afail(i, "no", False, got.fence) == "acknowledged"
        with pytest.raises(InvalidArgument):
            await wf.aenqueue_parallel([stage("", "x")])

    asyncio.run(main())


def _host(store_url: str, worker_id: str) -> "subprocess.Popen[str]":
    script = Path(__file__).resolve().parent / "workflow_host.py"
    return subprocess.Popen(
        [sys.executable, str(script), store_url, worker_id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_host_processes_complete_each_job_exactly_once(store_url: str) -> None:
    q = Queue(url=store_url)
    try:
        wf = q.workflow_jobs()
        n = 60
        ids = wf.enqueue_parallel(
            [stage(f"run-{i % 6}", f"stage-{i}", workflow="host.wf", payload={"i": i}) for i in range(n)]
        )
        hosts = [_host(store_url, "host-1"), _host(store_url, "host-2")]
        for h in hosts:  # both open the store, then both start at once
            assert h.stdout is not None and h.stdout.readline().strip() == "ready", h.stderr
        for h in hosts:
            assert h.stdin is not None
            h.stdin.write("go\n")
            h.stdin.flush()  # communicate() closes it
        reports: List[Dict[str, List[str]]] = []
        for h in hosts:
            out, err = h.communicate(timeout=300)
            assert h.returncode == 0, err
            reports.append(json.loads(out.strip().splitlines()[-1]))
        acked = [i for r in reports for i in r["acked"]]
        assert sorted(acked) == sorted(ids), "every job is acknowledged by exactly one host"
        assert [i for r in reports for i in r["superseded"]] == []
        jobs: List[Optional[Any]] = [q.get_job(i) for i in ids]
        assert all(j is not None and (j.status, j.attempt) == ("completed", 1) for j in jobs)
        first, second = set(reports[0]["acked"]), set(reports[1]["acked"])
        assert not (first & second) and first and second, "both hosts took work, none twice"
    finally:
        q.close()
