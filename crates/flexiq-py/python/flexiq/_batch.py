"""The jobs of :meth:`flexiq.Queue.enqueue_many`, turned into the native batch's items.

A batch goes to the engine as one atomic write: every job is checked here and again by the
engine before anything is stored, and one bad job refuses the whole batch. Each job is a
mapping with ``task`` (a name, or a :class:`~flexiq.Task` whose defaults then apply as they
do for ``apply_async``), optional ``args`` and ``kwargs``, and any of ``apply_async``'s
keyword options. Errors name the job's index in the batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping

from ._options import OPTION_NAMES, native_options
from .exceptions import InvalidArgument
from .task import Task, call_args

if TYPE_CHECKING:
    from .serialization import Serializer

__all__ = ["batch_items", "task_call", "task_name"]

#: The per-job options a batch item may carry: ``apply_async``'s keyword options.
OPTION_KEYS = frozenset(OPTION_NAMES)

_CALL_KEYS = frozenset({"task", "args", "kwargs"})


def task_name(at: str, task: Any) -> str:
    """The name of ``task`` (a name or a :class:`~flexiq.Task`); ``at`` says where it was given."""
    if isinstance(task, Task):
        return task.name
    if isinstance(task, str):
        return task
    raise InvalidArgument(f"{at} needs a task name or Task, not {type(task).__name__}")


def task_call(at: str, item: Mapping[str, Any], serializer: "Serializer") -> Dict[str, Any]:
    """The native form (``task``, ``payload``, ``options``) of one call described by ``item``:
    ``task``, ``args``, ``kwargs`` and ``apply_async``'s options, a Task's defaults applied, the
    arguments through ``serializer``. Used by batches, flows and scheduler templates alike; an
    error names ``at`` and the task."""
    task = item.get("task")
    name = task_name(at, task)
    options = {k: v for k, v in item.items() if k in OPTION_KEYS}
    try:
        opts = task.call_options(**options) if isinstance(task, Task) else native_options(options)
        payload = serializer.dumps_call(*call_args(item.get("args", ()), item.get("kwargs")))
    except InvalidArgument as e:
        raise InvalidArgument(f"{at} (task {name}): {e}") from None
    return {"task": name, "payload": payload, "options": opts}


def _item(i: int, job: Any, serializer: "Serializer") -> Dict[str, Any]:
    if not isinstance(job, Mapping):
        raise InvalidArgument(f"enqueue_many item {i} must be a dict, not {type(job).__name__}")
    unknown = sorted(str(k) for k in job if k not in OPTION_KEYS and k not in _CALL_KEYS)
    if unknown:
        raise InvalidArgument(
            f"enqueue_many item {i} has unknown keys {unknown}: expected task, args, kwargs and "
            f"the options of apply_async ({', '.join(sorted(OPTION_KEYS))})"
        )
    return task_call(f"enqueue_many item {i}", job, serializer)


def batch_items(jobs: Iterable[Mapping[str, Any]], serializer: "Serializer") -> List[Dict[str, Any]]:
    """The native items of a batch, in order; ``InvalidArgument`` naming the first bad job."""
    if isinstance(jobs, (str, bytes, Mapping)) or not isinstance(jobs, Iterable):
        raise InvalidArgument(f"enqueue_many takes a list of job dicts, not {type(jobs).__name__}")
    return [_item(i, job, serializer) for i, job in enumerate(jobs)]
