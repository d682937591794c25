"""The tree of :meth:`flexiq.Queue.add_flow`, turned into the native tree.

A flow is a parent job and the children it waits for, to any depth and across queues,
inserted as one write: every node is checked here and again by the engine before anything
is stored, and one bad node refuses the whole flow. Each node is a :class:`FlowNode` dict:
``task`` (a name, or a :class:`~flexiq.Task` whose defaults then apply as they do for
``apply_async``), the call's ``args`` and ``kwargs`` or a single ``payload`` (the one
positional argument: ``{"payload": x}`` enqueues what ``{"args": [x]}`` does), a pre-set
``id``, the ``namespace`` it is meant for (the queue's own), ``on_failure`` (what its failure
does to its parent), ``children``, and any keyword option of ``apply_async``. The tree is
walked without recursion, so a deep chain needs no deep Python stack, and a tree past the
engine's node cap (a dict that contains itself, say) is refused rather than walked forever.
Errors name the node by its path from the root, ``root.children[1].children[0]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

from ._batch import task_name
from ._options import OPTION_NAMES, EnqueueOptions, native_options
from .exceptions import InvalidArgument
from .task import Task, call_args

if TYPE_CHECKING:
    from .serialization import Serializer

__all__ = ["FLOW_POLICIES", "FlowNode", "MAX_FLOW_NODES", "native_tree"]

#: What a child's failure (failed, dead or cancelled) may do to its parent, in the engine's
#: order (``FlowNode.on_failure`` spells the same names).
FLOW_POLICIES = ("fail_parent", "continue_parent", "ignore_dependency", "remove_dependency")
#: Most jobs one flow may hold (the engine's cap).
MAX_FLOW_NODES = 10_000


class _FlowTask(EnqueueOptions):
    task: Union[str, Task]


class FlowNode(_FlowTask, total=False):
    """One job of a flow and the children it waits for. ``task`` is required; every option
    of :meth:`Task.apply_async` may be given too, but ``unique_key`` and ``dedup``, which a
    flow job cannot carry (the engine refuses them)."""

    #: The call's positional arguments (exclusive with ``payload``).
    args: Sequence[Any]
    #: The call's keyword arguments (exclusive with ``payload``).
    kwargs: Dict[str, Any]
    #: The call's one positional argument, serialized as ``args=[payload]`` is.
    payload: Any
    #: The job's id, a UUID (default: a new one).
    id: Optional[str]
    #: The namespace the node is meant for; it must be the queue's (no edge crosses one).
    namespace: Optional[str]
    #: What this node's failure does to its parent (default ``"fail_parent"``); not on the root.
    on_failure: Optional[Literal["fail_parent", "continue_parent", "ignore_dependency", "remove_dependency"]]
    #: The jobs this one waits for.
    children: Sequence["FlowNode"]


_OPTION_KEYS = frozenset(OPTION_NAMES)
#: The keys of a node that are not enqueue options, ``task`` first.
_NODE_KEYS = tuple(k for k in FlowNode.__annotations__ if k not in _OPTION_KEYS)


def _opt_str(at: str, key: str, node: Mapping[str, Any]) -> Optional[str]:
    value = node.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidArgument(f"{at}: {key} must be a string, not {type(value).__name__}")
    return value


def _node(path: str, node: Any, serializer: "Serializer") -> Tuple[Dict[str, Any], List[Any]]:
    """One native node without its children, and the children to visit."""
    if not isinstance(node, Mapping):
        raise InvalidArgument(f"flow node {path} must be a dict, not {type(node).__name__}")
    unknown = sorted(str(k) for k in node if k not in _NODE_KEYS and k not in _OPTION_KEYS)
    if unknown:
        raise InvalidArgument(
            f"flow node {path} has unknown keys {unknown}: expected {', '.join(_NODE_KEYS)} and the "
            f"options of apply_async ({', '.join(sorted(_OPTION_KEYS))})"
        )
    task = node.get("task")
    name = task_name(f"flow node {path}", task)
    at = f"flow node {path} (task {name})"
    policy = _opt_str(at, "on_failure", node)
    if policy is not None and policy not in FLOW_POLICIES:
        raise InvalidArgument(f"{at}: unknown on_failure policy {policy!r}: expected {', '.join(FLOW_POLICIES)}")
    children = node.get("children")
    if children is None:
        children = []
    elif not isinstance(children, (list, tuple)):
        raise InvalidArgument(f"{at}: children must be a list of nodes, not {type(children).__name__}")
    options = {k: v for k, v in node.items() if k in _OPTION_KEYS}
    call: Tuple[Tuple[Any, ...], Dict[str, Any]]
    try:
        if "payload" in node:
            if "args" in node or "kwargs" in node:
                raise InvalidArgument("give payload or args / kwargs, not both")
            call = ((node["payload"],), {})
        else:
            call = call_args(node.get("args", ()), node.get("kwargs"))
        opts = task.call_options(**options) if isinstance(task, Task) else native_options(options)
        payload = serializer.dumps_call(*call)
    except InvalidArgument as e:
        raise InvalidArgument(f"{at}: {e}") from None
    native: Dict[str, Any] = {
        "task": name,
        "payload": payload,
        "id": _opt_str(at, "id", node),
        "namespace": _opt_str(at, "namespace", node),
        "on_failure": policy,
        "options": opts,
        "children": [],
    }
    return native, list(children)


def native_tree(tree: Any, serializer: "Serializer") -> Dict[str, Any]:
    """The native tree of a flow; ``InvalidArgument`` naming the first bad node."""
    root: Dict[str, Any] = {}
    # (path, node, the native list its parent collects children in)
    todo: List[Tuple[str, Any, Optional[List[Dict[str, Any]]]]] = [("root", tree, None)]
    seen = 0
    while todo:
        path, node, siblings = todo.pop()
        seen += 1
        if seen > MAX_FLOW_NODES:
            raise InvalidArgument(f"a flow holds at most {MAX_FLOW_NODES} jobs")
        native, children = _node(path, node, serializer)
        if siblings is None:
            root = native
        else:
            siblings.append(native)
        # pushed last to first, so the first child (and its subtree) is converted first
        for i in range(len(children) - 1, -1, -1):
            todo.append((f"{path}.children[{i}]", children[i], native["children"]))
    return root
