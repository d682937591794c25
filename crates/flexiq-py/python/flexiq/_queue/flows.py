"""Flows on :class:`flexiq.Queue`, as ``flexiq-runtime``'s ``queue/flows.rs``: a tree of jobs
across queues inserted in one write, a parent's children by outcome, and detaching a child.

A parent waits (status ``"waiting"``) until its children finish; what a child's failure does
to it is the child's ``on_failure`` policy: ``"fail_parent"`` (the default: the parent
fails, naming the child), ``"continue_parent"`` (the parent runs at once), ``"ignore_dependency"``
(the failure is recorded and the parent waits for its other children as if this one had
completed) or ``"remove_dependency"`` (the edge goes, the parent waits for the others). A
parent's handler reads its children's results with ``current_job().children_values()`` and
the ignored failures with ``current_job().ignored_failures()``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .._flow import FlowNode, native_tree
from ..models import ChildDependency, Dependencies
from .base import QueueBase

__all__ = ["FlowsMixin"]

_OUTCOMES = ("processed", "unprocessed", "ignored", "failed")


class FlowsMixin(QueueBase):
    """Add a flow, read a parent's dependencies, detach a child."""

    def add_flow(self, tree: FlowNode) -> List[str]:
        """Inserts ``tree`` (a :class:`~flexiq.FlowNode`) and all its descendants in one
        write, each on its own queue, and returns their ids in the order the nodes were given:
        the root, then each child's subtree in turn. A bad node (an unknown key, a wrong type,
        an unknown policy, a policy on the root, an id given twice, another namespace, a
        unique key or dedup) raises :class:`~flexiq.InvalidArgument` naming it, and nothing
        is written; the ``max_pending`` cap applies as for enqueue."""
        return self._native.add_flow(native_tree(tree, self.serializer))

    def get_dependencies(self, job_id: str, after: Optional[str] = None, limit: int = 100) -> Dependencies:
        """One page of the jobs ``job_id`` waits on (``limit``: 1 to 10,000), by child id after
        ``after`` (the previous page's ``next_after``), sorted by outcome; results are decoded
        with the queue's serializer. An unknown job raises :class:`~flexiq.NotFound`, a
        malformed id or cursor or a limit out of range :class:`~flexiq.InvalidArgument`, a
        non-integer limit :class:`~flexiq.WrongType`."""
        page = self._native.get_dependencies(job_id, after, limit)
        loads = self.serializer.loads

        def child(d: Dict[str, Any]) -> ChildDependency:
            result = d["result"]
            return ChildDependency(**{**d, "result": None if result is None else loads(result)})

        lists = {k: [child(d) for d in page[k]] for k in _OUTCOMES}
        return Dependencies(**lists, next_after=page["next_after"])

    def remove_child_dependency(self, child_id: str) -> bool:
        """Detaches an unfinished child from the jobs waiting on it; a parent left with nothing
        open becomes claimable. False for a finished child or one nothing waits on; an unknown
        id raises :class:`~flexiq.NotFound`."""
        return self._native.remove_child_dependency(child_id)
