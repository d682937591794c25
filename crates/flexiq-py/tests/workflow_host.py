"""A workflow host for ``test_workflow.py``'s two-process test: it opens the store at argv[1]
with worker id argv[2], prints ``ready`` and waits for a line on stdin (so both hosts start
together), then loops dequeue, run (a short sleep, a heartbeat), fenced complete until the
queue has stayed empty for a while, and prints one JSON line: the ids whose complete was
acknowledged and those that came back superseded."""

from __future__ import annotations

import json
import sys
import time

from flexiq import Queue


def main(url: str, worker_id: str) -> None:
    q = Queue(url=url)
    wf = q.workflow_jobs(worker_id=worker_id)
    print("ready", flush=True)
    sys.stdin.readline()
    acked, superseded = [], []
    idle = 0
    while idle < 20:
        got = wf.dequeue(serves=["host.wf"])
        if got is None:
            idle += 1
            time.sleep(0.05)
            continue
        idle = 0
        assert got.job.worker_id == worker_id and got.fence.job_id == got.job.id
        time.sleep(0.002)
        wf.touch_job(got.job.id)
        outcome = wf.complete(got.job.id, got.fence)
        (acked if outcome == "acknowledged" else superseded).append(got.job.id)
    q.close()
    print(json.dumps({"acked": acked, "superseded": superseded}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
