"""Flows (``_queue/flows.py``) on every store: a three-level flow across three queues run by
a real worker whose parent handlers read ``children_values`` / ``ignored_failures``, each
failure policy, ``get_dependencies`` paging, ``remove_child_dependency``, the async twins,
and bad trees and arguments refused with the typed error and nothing written."""

from __future__ import annotations

import asyncio
import math
import threading
import uuid
from typing import Any, Callable, Dict, List, Sequence, get_args, get_type_hints

import pytest

from conftest import wait_until

from flexiq import (
    ChildDependency,
    Dependencies,
    FlowNode,
    InvalidArgument,
    Job,
    NotFound,
    Queue,
    Task,
    current_job,
)
from flexiq._flow import FLOW_POLICIES
from flexiq._options import OPTION_NAMES

WRONG_INTS = (1.5, math.nan, "10", None, True)
WRONG_STRS = (None, 3, b"id")


def _job(queue: Queue, job_id: str) -> Job:
    job = queue.get_job(job_id)
    assert job is not None, f"job {job_id} is gone"
    return job


def _status(queue: Queue, job_id: str) -> str:
    return _job(queue, job_id).status


def _total(queue: Queue) -> int:
    return sum(queue.stats().values())


def _run_until(queue: Queue, queues: Sequence[str], done: Callable[[], bool], what: str) -> None:
    with queue.worker(concurrency=2, queues=list(queues)):
        wait_until(done, timeout=30, what=what)


def _failing(queue: Queue, name: str, queue_name: str) -> Task:
    """A task of ``queue_name`` that fails for good on its first attempt."""

    @queue.task(name=name, queue=queue_name, max_retries=0)
    def fail() -> None:
        raise RuntimeError(f"{name} broke")

    return fail


def test_the_flow_node_type_names_every_key_and_policy() -> None:
    assert FlowNode.__required_keys__ == frozenset({"task"})
    node_keys = {"task", "args", "kwargs", "payload", "id", "namespace", "on_failure", "children"}
    assert set(FlowNode.__annotations__) == node_keys | set(OPTION_NAMES)
    (policies, _none) = get_args(get_type_hints(FlowNode)["on_failure"])
    assert get_args(policies) == FLOW_POLICIES


def test_a_three_level_flow_across_three_queues_runs_children_first(queue: Queue) -> None:
    finished: List[str] = []
    lock = threading.Lock()
    seen: Dict[str, Any] = {}

    def record(tag: str) -> None:
        with lock:
            finished.append(tag)

    @queue.task(name="fl.leaf", queue="fl-c")
    def leaf(n: int) -> int:
        record(f"leaf{n}")
        return n

    @queue.task(name="fl.part", queue="fl-b")
    def part(label: str) -> Dict[str, Any]:
        values = current_job().children_values()
        record(label)
        return {"label": label, "sum": sum(values.values()), "children": len(values)}

    @queue.task(name="fl.report", queue="fl-a")
    def report() -> str:
        ctx = current_job()
        seen["values"] = ctx.children_values()
        seen["ignored"] = ctx.ignored_failures()
        record("report")
        return "done"

    _failing(queue, "fl.bad", "fl-c")
    tree: FlowNode = {
        "task": report,
        "children": [
            {"task": part, "args": ["p1"], "children": [{"task": leaf, "payload": 1}, {"task": leaf, "payload": 2}]},
            {"task": "fl.part", "queue": "fl-b", "kwargs": {"label": "p2"}, "children": [{"task": leaf, "payload": 4}]},
            {"task": "fl.bad", "queue": "fl-c", "max_retries": 0, "on_failure": "ignore_dependency"},
        ],
    }
    ids = queue.add_flow(tree)
    assert len(ids) == 7 and len(set(ids)) == 7
    root, p1, l1, l2, p2, l4, bad = ids
    jobs = {i: _job(queue, i) for i in ids}
    assert [jobs[i].task for i in ids] == ["fl.report", "fl.part", "fl.leaf", "fl.leaf", "fl.part", "fl.leaf", "fl.bad"]
    assert [jobs[i].queue for i in (root, p1, l1, p2, bad)] == ["fl-a", "fl-b", "fl-c", "fl-b", "fl-c"]
    assert [jobs[i].status for i in (root, p1, p2)] == ["waiting"] * 3
    assert [jobs[i].status for i in (l1, l2, l4, bad)] == ["pending"] * 4
    assert sorted(jobs[root].depends_on) == sorted([p1, p2, bad])
    assert sorted(jobs[p1].depends_on) == sorted([l1, l2])

    with queue.worker(concurrency=3, queues=["fl-a", "fl-b", "fl-c"]):
        assert queue.result(root, timeout=60) == "done"
    assert finished.index("report") == len(finished) - 1, finished
    for parent, kids in (("p1", ["leaf1", "leaf2"]), ("p2", ["leaf4"])):
        assert all(finished.index(k) < finished.index(parent) for k in kids), finished
    assert seen["values"] == {
        p1: {"label": "p1", "sum": 3, "children": 2},
        p2: {"label": "p2", "sum": 4, "children": 1},
    }
    assert list(seen["ignored"]) == [bad] and "fl.bad broke" in seen["ignored"][bad]
    assert _status(queue, bad) == "dead"
    deps = queue.get_dependencies(root)
    assert isinstance(deps, Dependencies) and deps.next_after is None
    assert sorted(c.id for c in deps.processed) == sorted([p1, p2])
    assert deps.unprocessed == [] and deps.failed == []
    (ignored,) = deps.ignored
    assert isinstance(ignored, ChildDependency)
    assert (ignored.id, ignored.queue, ignored.task, ignored.status, ignored.policy) == (
        bad, "fl-c", "fl.bad", "dead", "ignore_dependency",
    )
    assert ignored.result is None and "fl.bad broke" in (ignored.error or "")
    first = next(c for c in deps.processed if c.id == p1)
    assert (first.policy, first.status, first.result, first.error) == (
        "fail_parent", "completed", {"label": "p1", "sum": 3, "children": 2}, None,
    )


def test_fail_parent_fails_the_parent_naming_the_child(queue: Queue) -> None:
    ran: List[str] = []
    bad_task = _failing(queue, "fp.bad", "fp")
    parent = queue.task(name="fp.parent", queue="fp")(lambda: ran.append("parent"))
    queue.task(name="fp.ok", queue="fp")(lambda: ran.append("ok"))
    for policy in ({"on_failure": "fail_parent"}, {}):  # fail_parent is the default
        root, bad, ok = queue.add_flow(
            {"task": parent, "children": [{"task": bad_task, **policy}, {"task": "fp.ok", "queue": "fp"}]}
        )
        _run_until(queue, ["fp"], lambda: _status(queue, root) == "failed", "the parent to fail")
        failed = _job(queue, root)
        assert bad in (failed.last_error or "") and "fp.bad broke" in (failed.last_error or ""), failed.last_error
        deps = queue.get_dependencies(root)
        assert [c.id for c in deps.failed] == [bad] and deps.failed[0].policy == "fail_parent"
    assert "parent" not in ran


def test_continue_parent_runs_the_parent_at_once(queue: Queue) -> None:
    seen: Dict[str, Any] = {}
    _failing(queue, "cp.bad", "cp")

    @queue.task(name="cp.parent", queue="cp")
    def parent() -> str:
        seen["values"] = current_job().children_values()
        seen["deps"] = queue.get_dependencies(current_job().id)
        return "went on"

    root, bad, later = queue.add_flow(
        {
            "task": "cp.parent",
            "queue": "cp",
            "children": [
                {"task": "cp.bad", "queue": "cp", "on_failure": "continue_parent"},
                {"task": "cp.later", "queue": "cp", "delay": 3600},
            ],
        }
    )
    _run_until(queue, ["cp"], lambda: _status(queue, root) == "completed", "the parent to run")
    assert queue.get_result(root) == "went on"
    assert seen["values"] == {}, "no child completed"
    deps: Dependencies = seen["deps"]
    assert [c.id for c in deps.failed] == [bad] and deps.failed[0].policy == "continue_parent"
    assert [c.id for c in deps.unprocessed] == [later] and deps.unprocessed[0].status == "pending"
    assert _status(queue, later) == "pending", "the other child is left alone"


def test_ignore_dependency_waits_for_the_other_children(queue: Queue) -> None:
    seen: Dict[str, Any] = {}
    bad_task = _failing(queue, "ig.bad", "ig")
    ok_task = queue.task(name="ig.ok", queue="ig")(lambda: "ok")

    @queue.task(name="ig.parent", queue="ig")
    def parent() -> None:
        ctx = current_job()
        seen.update(values=ctx.children_values(), ignored=ctx.ignored_failures())

    root, bad, ok = queue.add_flow(
        {
            "task": "ig.parent",
            "queue": "ig",
            "children": [{"task": bad_task, "on_failure": "ignore_dependency"}, {"task": ok_task, "delay": 3600}],
        }
    )
    _run_until(queue, ["ig"], lambda: _status(queue, bad) == "dead", "the child to fail")
    assert _status(queue, root) == "waiting", "it still waits for the delayed child"
    deps = queue.get_dependencies(root)
    assert [c.id for c in deps.ignored] == [bad] and [c.id for c in deps.unprocessed] == [ok]
    queue.promote(ok)
    _run_until(queue, ["ig"], lambda: _status(queue, root) == "completed", "the parent to run")
    assert seen["values"] == {ok: "ok"}
    assert list(seen["ignored"]) == [bad] and "ig.bad broke" in seen["ignored"][bad]


def test_remove_dependency_drops_the_edge(queue: Queue) -> None:
    seen: Dict[str, Any] = {}
    bad_task = _failing(queue, "rd.bad", "rd")
    ok_task = queue.task(name="rd.ok", queue="rd")(lambda: 7)

    @queue.task(name="rd.parent", queue="rd")
    def parent() -> None:
        ctx = current_job()
        seen.update(values=ctx.children_values(), ignored=ctx.ignored_failures())

    root, bad, ok = queue.add_flow(
        {
            "task": "rd.parent",
            "queue": "rd",
            "children": [{"task": bad_task, "on_failure": "remove_dependency"}, {"task": ok_task, "delay": 3600}],
        }
    )
    _run_until(queue, ["rd"], lambda: _status(queue, bad) == "dead", "the child to fail")
    assert _status(queue, root) == "waiting"
    deps = queue.get_dependencies(root)
    assert [c.id for c in deps.unprocessed] == [ok] and deps.failed == [] and deps.ignored == []
    assert bad not in _job(queue, root).depends_on
    queue.promote(ok)
    _run_until(queue, ["rd"], lambda: _status(queue, root) == "completed", "the parent to run")
    assert seen == {"values": {ok: 7}, "ignored": {}}


def test_get_dependencies_pages_by_child_id(queue: Queue) -> None:
    child = queue.task(name="pg.child", queue="pg-kids")(lambda n: n * 10)
    root, *kids = queue.add_flow(
        {"task": "pg.parent", "queue": "pg", "children": [{"task": child, "payload": n} for n in range(7)]}
    )
    assert len(kids) == 7

    def pages(limit: int) -> List[Dependencies]:
        out, after = [], None
        while True:
            page = queue.get_dependencies(root, after=after, limit=limit)
            out.append(page)
            if page.next_after is None:
                return out
            after = page.next_after

    got = pages(3)
    assert [len(p.unprocessed) for p in got] == [3, 3, 1]
    seen = [c.id for p in got for c in p.unprocessed]
    assert seen == sorted(kids), "every child once, by id"
    assert got[0].next_after == seen[2]
    assert [len(p.unprocessed) for p in pages(7)] == [7, 0], "a full page points past itself"
    assert [len(p.unprocessed) for p in pages(1000)] == [7]
    _run_until(queue, ["pg-kids"], lambda: all(_status(queue, k) == "completed" for k in kids), "the children")
    done = pages(4)
    assert [len(p.processed) for p in done] == [4, 3]
    assert {c.id: c.result for p in done for c in p.processed} == {k: n * 10 for n, k in enumerate(kids)}
    assert _status(queue, root) == "pending", "its children done, the parent is due"


def test_remove_child_dependency_releases_the_parent(queue: Queue) -> None:
    root, a, b = queue.add_flow({"task": "rc.parent", "queue": "rc", "children": [{"task": "rc.a"}, {"task": "rc.b"}]})
    assert queue.remove_child_dependency(a) is True
    assert queue.remove_child_dependency(a) is False, "nothing waits on it any more"
    assert [c.id for c in queue.get_dependencies(root).unprocessed] == [b]
    assert _status(queue, root) == "waiting"
    assert _status(queue, a) == "pending", "the child itself stays"
    assert queue.remove_child_dependency(b) is True
    assert _status(queue, root) == "pending", "nothing open: claimable"
    assert queue.remove_child_dependency(root) is False, "nothing waits on the root"
    with pytest.raises(NotFound):
        queue.remove_child_dependency(str(uuid.uuid4()))
    with pytest.raises(InvalidArgument):
        queue.remove_child_dependency("garbage")
    for wrong in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.remove_child_dependency(wrong)  # type: ignore[arg-type]


def test_a_flow_node_may_also_depend_on_an_existing_job(queue: Queue) -> None:
    outside = queue.enqueue("dep.outside", queue="dq")
    given = str(uuid.uuid4())
    root, child = queue.add_flow(
        {
            "task": "dep.parent",
            "queue": "dq",
            "id": given,
            "namespace": queue.namespace,
            "depends_on": [outside],
            "children": [{"task": "dep.child", "queue": "dq", "priority": 5}],
        }
    )
    assert root == given
    assert _job(queue, child).priority == 5
    deps = queue.get_dependencies(root)
    assert {c.id: c.policy for c in deps.unprocessed} == {outside.id: "cancel_dependent", child: "fail_parent"}


def test_a_deep_chain_needs_no_deep_stack(queue: Queue) -> None:
    depth = 1200  # past Python's default recursion limit
    tree: FlowNode = {"task": "deep.leaf", "queue": "deep"}
    for _ in range(depth):
        tree = {"task": "deep.up", "queue": "deep", "children": [tree]}
    ids = queue.add_flow(tree)
    assert len(ids) == depth + 1
    assert _status(queue, ids[0]) == "waiting" and _status(queue, ids[-1]) == "pending"
    assert _job(queue, ids[0]).depends_on == [ids[1]]
    assert _job(queue, ids[-1]).task == "deep.leaf"


BAD_TREES: List[Any] = [
    ([], "flow node root must be a dict"),
    ({"queue": "bt"}, "flow node root needs a task name"),
    ({"task": 5}, "needs a task name or Task, not int"),
    ({"task": "bt.r", "colour": "red"}, "flow node root has unknown keys ['colour']"),
    ({"task": "bt.r", "children": {"task": "bt.c"}}, "children must be a list"),
    ({"task": "bt.r", "children": [{"task": "bt.c"}, "bt.d"]}, "flow node root.children[1] must be a dict"),
    ({"task": "bt.r", "children": [{"task": "bt.c", "children": [{"task": "bt.d", "bogus": 1}]}]},
     "flow node root.children[0].children[0] has unknown keys ['bogus']"),
    ({"task": "bt.r", "children": [{"task": "bt.c", "on_failure": "explode"}]},
     "flow node root.children[0] (task bt.c): unknown on_failure policy 'explode'"),
    ({"task": "bt.r", "children": [{"task": "bt.c", "on_failure": "cancel_dependent"}]}, "unknown on_failure policy"),
    ({"task": "bt.r", "children": [{"task": "bt.c", "on_failure": 1}]}, "on_failure must be a string, not int"),
    ({"task": "bt.r", "on_failure": "fail_parent"}, "root of a flow"),
    ({"task": "bt.r", "id": 7}, "id must be a string, not int"),
    ({"task": "bt.r", "id": "not-a-uuid"}, "not-a-uuid"),
    ({"task": "bt.r", "namespace": 1}, "namespace must be a string"),
    ({"task": "bt.r", "children": [{"task": "bt.c", "namespace": "elsewhere"}]}, "namespace elsewhere"),
    ({"task": "bt.r", "priority": "high"}, "flow node root (task bt.r): priority must be an integer"),
    ({"task": "bt.r", "children": [{"task": "bt.c", "delay": -1}]}, "flow node root.children[0] (task bt.c): delay"),
    ({"task": "bt.r", "children": [{"task": "bt.c", "lifo": True, "delay": 5}]}, "lifo"),
    ({"task": "bt.r", "args": "abc"}, "args must be a list or tuple"),
    ({"task": "bt.r", "payload": 1, "args": [1]}, "give payload or args / kwargs, not both"),
    ({"task": "bt.r", "payload": object()}, "not JSON serializable"),
    ({"task": "bt.r", "children": [{"task": "bt.c", "unique_key": "k"}]}, "cannot carry a unique key or dedup"),
    ({"task": "bt.r", "children": [{"task": "bt.c", "dedup": {"id": "k"}}]}, "cannot carry a unique key or dedup"),
    ({"task": ""}, "task name"),
]


def test_bad_trees_are_refused_naming_the_node_and_nothing_is_written(queue: Queue) -> None:
    twice = str(uuid.uuid4())
    cases = BAD_TREES + [
        ({"task": "bt.r", "id": twice, "children": [{"task": "bt.c", "id": twice}]}, "cycle"),
        ({"task": "bt.r", "id": twice, "children": [{"task": "bt.c", "depends_on": twice}]}, "ancestor"),
    ]
    looped: Dict[str, Any] = {"task": "bt.loop"}
    looped["children"] = [looped]
    cases.append((looped, "at most 10000 jobs"))
    for tree, word in cases:
        with pytest.raises(InvalidArgument) as e:
            queue.add_flow(tree)
        assert word in str(e.value), (tree, str(e.value))
    native = queue._native
    for tree, word in [
        ({"task": "bt.r", "payload": "text"}, "flow node root (task bt.r): payload must be bytes, not str"),
        ({"task": "bt.r", "children": [{"task": "bt.c", "bogus": 1}]}, 'flow node root.children[0]: unknown key "bogus"'),
        ({"task": "bt.r", "options": {"priority": "hi"}}, "flow node root (task bt.r): enqueue option priority"),
        ({"task": "bt.r", "children": [{"task": "bt.c", "on_failure": "explode"}]}, "unknown child failure policy"),
        ({"task": "bt.r", "children": ({"task": "bt.c"},)}, "children must be a list"),
        ({"task": None}, "flow node root needs a task name"),
        ([{"task": "bt.r"}], "flow node root must be a dict"),
    ]:
        with pytest.raises(InvalidArgument) as e:
            native.add_flow(tree)  # type: ignore[arg-type]
        assert word in str(e.value), (tree, str(e.value))
    assert _total(queue) == 0, "nothing was written"


def test_get_dependencies_refuses_bad_arguments(queue: Queue) -> None:
    root, _ = queue.add_flow({"task": "ga.r", "queue": "ga", "children": [{"task": "ga.c"}]})
    for limit in (0, -1, 10_001, 2**40):
        with pytest.raises(InvalidArgument, match="limit"):
            queue.get_dependencies(root, limit=limit)
    with pytest.raises(InvalidArgument, match="out of range"):
        queue.get_dependencies(root, limit=2**64)
    for wrong in WRONG_INTS:
        with pytest.raises(TypeError):
            queue.get_dependencies(root, limit=wrong)  # type: ignore[arg-type]
    for cursor in ("not-a-cursor", "", "01a2"):
        with pytest.raises(InvalidArgument):
            queue.get_dependencies(root, after=cursor)
    with pytest.raises(TypeError):
        queue.get_dependencies(root, after=5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        queue.get_dependencies("garbage")
    with pytest.raises(NotFound):
        queue.get_dependencies(str(uuid.uuid4()))
    for wrong_id in WRONG_STRS:
        with pytest.raises(TypeError):
            queue.get_dependencies(wrong_id)  # type: ignore[arg-type]
    assert _total(queue) == 2 and _status(queue, root) == "waiting"


def test_async_twins_of_flows(queue: Queue) -> None:
    async def main() -> None:
        root, a, b = await queue.aadd_flow(
            {"task": "af.r", "queue": "af", "children": [{"task": "af.c", "payload": 1}, {"task": "af.c"}]}
        )
        deps = await queue.aget_dependencies(root, limit=1)
        assert len(deps.unprocessed) == 1 and deps.next_after is not None
        rest = await queue.aget_dependencies(root, after=deps.next_after)
        assert sorted([deps.unprocessed[0].id, rest.unprocessed[0].id]) == sorted([a, b])
        assert await queue.aremove_child_dependency(a) is True
        assert await queue.aremove_child_dependency(a) is False
        with pytest.raises(InvalidArgument):
            await queue.aadd_flow({"task": "af.r", "children": [{"task": "af.c", "on_failure": "never"}]})
        with pytest.raises(InvalidArgument):
            await queue.aget_dependencies(root, limit=0)
        with pytest.raises(NotFound):
            await queue.aremove_child_dependency(str(uuid.uuid4()))

    asyncio.run(main())
    assert _total(queue) == 3
