"""Job schedulers of :class:`flexiq.Queue`, as ``flexiq-runtime``'s ``queue/schedulers.rs``:
repeatable jobs kept in the store, each a rule (a cron pattern in a time zone, or every N ms)
and the job each slot enqueues, fired by the elected cleaner of a worker that runs
maintenance (the default of :meth:`flexiq.Queue.worker`).

:meth:`SchedulersMixin.upsert_job_scheduler` creates or replaces one, and the reads return
:class:`~flexiq.JobScheduler` values, their payloads decoded with the queue's serializer.
``remove_job_scheduler`` and ``count_job_schedulers`` convert nothing and are the native calls
as they are (:mod:`flexiq._queue.forward`). A bad rule or template is
:class:`~flexiq.InvalidArgument` naming the scheduler and the key, as a bad options dict is
elsewhere, and nothing is stored: the keys and their types are checked by the native layer
(``src/schedule.rs``), the values by the engine (a cron pattern that parses, a known zone, a
limit of 1 or more, a window that ends after it starts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Literal, Mapping, Optional, Sequence, TypedDict, Union

from .._batch import task_call
from .._options import OPTION_NAMES, EnqueueOptions, public_options
from ..exceptions import InvalidArgument
from ..models import JobScheduler, Page
from ..task import Task
from .base import QueueBase

if TYPE_CHECKING:
    from ..serialization import Serializer

__all__ = ["TEMPLATE_REFUSED", "SchedulerRepeat", "SchedulerTemplate", "SchedulersMixin", "native_template"]


class SchedulerRepeat(TypedDict, total=False):
    """When a scheduler fires: ``cron`` or ``every_ms`` (exactly one), and the optional rest.
    Times are Unix ms, periods ms."""

    #: A cron pattern: five fields, or six with seconds first (``"0 9 * * MON-FRI"``).
    cron: str
    #: The IANA zone the pattern is read in (``"Europe/Berlin"``); UTC when absent. Cron only.
    tz: Optional[str]
    #: The period in ms (1 or more), from ``start_at_ms`` or the first upsert.
    every_ms: int
    #: Jobs to fire in all (1 or more); no limit when absent.
    limit: Optional[int]
    #: No slot before this Unix ms.
    start_at_ms: Optional[int]
    #: No slot after this Unix ms.
    end_at_ms: Optional[int]
    #: Fire once at once (at the upsert, or at ``start_at_ms``), then follow the rule.
    immediately: Optional[bool]
    #: Slots missed while no leader ran: ``"latest"`` (the default) fires the newest only,
    #: ``"none"`` skips to the next slot ahead, ``"all"`` fires each, oldest first.
    catch_up: Optional[Literal["latest", "none", "all"]]
    #: With ``"all"``: most missed slots one round fires (1 to 1000, default 100).
    catch_up_max: Optional[int]


class _TemplateTask(EnqueueOptions):
    task: Union[str, Task]


class SchedulerTemplate(_TemplateTask, total=False):
    """The job each slot enqueues. ``task`` (a name, or a :class:`~flexiq.Task` whose defaults
    then apply) is required; ``args`` and ``kwargs`` are encoded with the queue's serializer as
    ``enqueue`` encodes them; any option of :meth:`flexiq.Queue.enqueue` may be given too, but
    those in :data:`TEMPLATE_REFUSED`: each slot decides when its job runs and its unique key."""

    #: The call's positional arguments.
    args: Sequence[Any]
    #: The call's keyword arguments.
    kwargs: Dict[str, Any]


#: The enqueue options a template may not set: each slot's job runs at its slot (no delay,
#: eta or LIFO), carries the slot's unique key (no unique_key or dedup) and waits on nothing.
TEMPLATE_REFUSED = ("delay", "eta", "unique_key", "dedup", "depends_on", "lifo")

_CALL_KEYS = ("task", "args", "kwargs")
_OPTION_KEYS = tuple(n for n in OPTION_NAMES if n not in TEMPLATE_REFUSED)


def native_template(scheduler_id: str, template: Any, serializer: "Serializer") -> Dict[str, Any]:
    """A template as the native dict (``task``, ``payload``, ``options`` in engine units);
    :class:`~flexiq.InvalidArgument` naming the scheduler and the key."""
    at = f"scheduler {scheduler_id}: template"
    if not isinstance(template, Mapping):
        raise InvalidArgument(f"{at} must be a dict, not {type(template).__name__}")
    unknown = sorted(str(k) for k in template if k not in _CALL_KEYS and k not in OPTION_NAMES)
    if unknown:
        raise InvalidArgument(
            f"{at} has unknown keys {unknown}: expected task, args, kwargs and the enqueue options "
            f"({', '.join(_OPTION_KEYS)})"
        )
    refused = [k for k in TEMPLATE_REFUSED if template.get(k) is not None]
    if refused:
        raise InvalidArgument(
            f"{at} cannot set {refused[0]}: each slot decides when its job runs and its unique key "
            f"(a template sets none of {', '.join(TEMPLATE_REFUSED)})"
        )
    return task_call(at, template, serializer)


class SchedulersMixin(QueueBase):
    """Create or replace, read and list job schedulers (remove and count are forwarded)."""

    def _scheduler(self, d: Dict[str, Any]) -> JobScheduler:
        t = d["template"]
        args, kwargs = self.serializer.loads_call(t["payload"])
        template = {"task": t["task"], "args": list(args), "kwargs": kwargs, "options": public_options(t["options"])}
        return JobScheduler(**{**d, "template": template})

    def upsert_job_scheduler(
        self, scheduler_id: str, repeat: SchedulerRepeat, template: SchedulerTemplate
    ) -> JobScheduler:
        """Creates scheduler ``scheduler_id``, or replaces the rule and template of the one
        with that id (keeping its count and last slot: a slot it fired never fires again), and
        returns it as stored, with its next slot.

        ``repeat`` (:class:`SchedulerRepeat`) is ``{"cron": "0 9 * * MON-FRI", "tz":
        "Europe/Berlin"}`` (``tz`` optional, UTC) or ``{"every_ms": 60000}``, plus optional
        ``limit``, ``start_at_ms`` / ``end_at_ms`` (Unix ms), ``immediately``, ``catch_up``
        (``"latest"``, ``"none"``, ``"all"``) and ``catch_up_max`` (with ``"all"``).
        ``template`` (:class:`SchedulerTemplate`) is ``{"task": "report", "args": [...],
        "kwargs": {...}}`` with any enqueue option but ``delay``, ``eta``, ``unique_key``,
        ``dedup``, ``depends_on`` and ``lifo``. An unknown key, a wrong type, both or neither
        of ``cron`` and ``every_ms``, a malformed pattern or an unknown zone raise
        :class:`~flexiq.InvalidArgument` naming the scheduler, and nothing is stored. The
        jobs are enqueued by the elected cleaner of a worker running maintenance."""
        if not isinstance(scheduler_id, str):
            raise InvalidArgument(f"scheduler_id must be a string, not {type(scheduler_id).__name__}")
        if not isinstance(repeat, Mapping):
            raise InvalidArgument(f"scheduler {scheduler_id}: repeat must be a dict, not {type(repeat).__name__}")
        native = native_template(scheduler_id, template, self.serializer)
        return self._scheduler(self._native.upsert_job_scheduler(scheduler_id, dict(repeat), native))

    def get_job_scheduler(self, scheduler_id: str) -> Optional[JobScheduler]:
        """The scheduler ``scheduler_id``, or ``None`` when there is none."""
        d = self._native.get_job_scheduler(scheduler_id)
        return None if d is None else self._scheduler(d)

    def list_job_schedulers(self, limit: int = 100, after: Optional[str] = None) -> Page[JobScheduler]:
        """A keyset page of schedulers by id (``limit`` 1 to 10,000); pass ``next_cursor`` back
        as ``after``. ``None`` means that was the last page. A malformed cursor or a limit out
        of range raise :class:`~flexiq.InvalidArgument`, a non-integer limit :class:`~flexiq.WrongType`."""
        items, cursor = self._native.list_job_schedulers(limit, after)
        return Page([self._scheduler(d) for d in items], cursor)
