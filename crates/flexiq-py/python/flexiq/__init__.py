"""flexiq: a durable job queue with a Rust engine.

Embedded on SQLite (``Queue(db_path="tasks.db")``), or shared by many worker processes on
PostgreSQL or Redis (``Queue(url="postgres://...")``, ``Queue(url="redis://...")``)::

    from flexiq import Queue

    queue = Queue(db_path="tasks.db")

    @queue.task()
    def add(a, b):
        return a + b

    job = add.delay(2, 3)
    # elsewhere: flexiq worker --app myapp:queue
    assert job.result(timeout=10) == 5
"""

from ._flexiq import __version__, contract_level, reserved_setting_prefixes
from ._flow import FlowNode
from ._options import DedupOptions
from ._queue.events import EventIterator
from ._queue.workflow import WorkflowJobs, WorkflowJobSpec, WorkflowServes
from .context import JobContext, current_job
from .exceptions import (
    BackendError,
    Closed,
    Conflict,
    ContractTooOld,
    FlexiqError,
    FlexiqTimeout,
    InvalidArgument,
    JobCancelled,
    JobFailed,
    JobNotFound,
    NotFound,
    QueueFull,
    Superseded,
    TaskRevoked,
    Unsupported,
    WrongType,
)
from .models import (
    ChildDependency,
    Dependencies,
    Dequeued,
    EffectiveRetention,
    EVENT_KINDS,
    EnqueueOutcome,
    Event,
    Fence,
    Job,
    JobScheduler,
    Page,
    Retention,
    RetentionPreview,
    WorkflowJob,
)
from .queue import Queue
from .result import JobResult
from .serialization import JsonSerializer, PickleSerializer, Serializer
from .task import Task
from .worker import Worker

__all__ = [
    "__version__",
    "BackendError",
    "ChildDependency",
    "Closed",
    "Conflict",
    "ContractTooOld",
    "DedupOptions",
    "Dependencies",
    "Dequeued",
    "EffectiveRetention",
    "EVENT_KINDS",
    "EnqueueOutcome",
    "Event",
    "EventIterator",
    "Fence",
    "FlowNode",
    "FlexiqError",
    "FlexiqTimeout",
    "InvalidArgument",
    "Job",
    "JobCancelled",
    "JobContext",
    "JobFailed",
    "JobNotFound",
    "JobResult",
    "JobScheduler",
    "JsonSerializer",
    "NotFound",
    "Page",
    "PickleSerializer",
    "Queue",
    "QueueFull",
    "Retention",
    "RetentionPreview",
    "Serializer",
    "Superseded",
    "Task",
    "TaskRevoked",
    "Unsupported",
    "Worker",
    "WorkflowJob",
    "WorkflowJobSpec",
    "WorkflowJobs",
    "WorkflowServes",
    "WrongType",
    "contract_level",
    "current_job",
    "reserved_setting_prefixes",
]
