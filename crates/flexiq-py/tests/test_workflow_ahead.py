"""``claim_ahead`` on the workflow view, on every store: an ack claims the host's next job in the
same store call, the next dequeue gets it, a held job no one dequeues goes back without counting
the attempt, and a non-bool option is refused."""

from __future__ import annotations

import time
from typing import Any, Dict, List

import pytest

from flexiq import Queue, WorkflowJob, WorkflowJobs, WrongType


def stage(run: str, stage_id: str) -> Dict[str, Any]:
    return {"workflow_run_id": run, "workflow_id": "order", "stage_id": stage_id, "payload": {"s": stage_id}}


def running(wf: WorkflowJobs, run: str) -> List[WorkflowJob]:
    return [j for j in wf.get_jobs_by_workflow_run(run) if j.status == "running"]


def test_a_host_loop_with_claim_ahead_takes_the_held_job(queue: Queue) -> None:
    wf = queue.workflow_jobs(worker_id="h1", claim_ahead=True)
    wf.enqueue_parallel([stage("r", s) for s in "abc"])
    got = wf.dequeue()
    assert got is not None
    done = []
    while got is not None:
        done.append(got.job.stage_id)
        assert wf.complete(got.job.id, got.fence) == "acknowledged"
        held = running(wf, "r")
        assert len(held) <= 1 and all(j.worker_id == "h1" for j in held)
        got = wf.dequeue()
        if held and (got is None or got.job.id != held[0].id):
            # Only a held job the host was too slow to take (over a second) goes back.
            back = {j.id: j for j in wf.get_jobs_by_workflow_run("r")}[held[0].id]
            assert (back.last_error or "").startswith("deferred: claimed ahead"), back
    assert sorted(done) == ["a", "b", "c"]
    assert all(j.status == "completed" and j.attempt == 1 for j in wf.get_jobs_by_workflow_run("r"))


def test_a_held_job_not_dequeued_goes_back(queue: Queue) -> None:
    wf = queue.workflow_jobs(worker_id="h1", claim_ahead=True)
    wf.enqueue_parallel([stage("r", "a"), stage("r", "b")])
    got = wf.dequeue()
    assert got is not None
    wf.complete(got.job.id, got.fence)
    (held,) = running(wf, "r")
    deadline = time.monotonic() + 10
    while running(wf, "r") and time.monotonic() < deadline:
        time.sleep(0.02)
    back = {j.stage_id: j for j in wf.get_jobs_by_workflow_run("r")}[held.stage_id]
    assert back.status == "pending" and back.worker_id is None
    assert (back.last_error or "").startswith("deferred: claimed ahead")
    again = wf.dequeue()
    assert again is not None and (again.job.id, again.job.attempt) == (held.id, 1)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_claim_ahead_must_be_a_bool(queue: Queue, bad: Any) -> None:
    with pytest.raises(WrongType, match="claim_ahead"):
        queue.workflow_jobs(claim_ahead=bad)
