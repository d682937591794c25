"""The exceptions flexiq raises, one class per error kind of the engine.

Every error carries a stable upper-case ``code`` (the same codes the Node SDK and the CLI
report), so callers can branch on ``except flexiq.QueueFull`` or on ``err.code`` without
parsing messages. Where a built-in exception means the same thing the class also derives
from it: an unknown id is a ``KeyError``, bad input a ``ValueError`` (and a value of the wrong
type also a ``TypeError``), a wait that ran out a ``TimeoutError``.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

__all__ = [
    "FlexiqError",
    "NotFound",
    "JobNotFound",
    "InvalidArgument",
    "WrongType",
    "QueueFull",
    "TaskRevoked",
    "ContractTooOld",
    "Superseded",
    "Conflict",
    "Unsupported",
    "Closed",
    "FlexiqTimeout",
    "BackendError",
    "JobFailed",
    "JobCancelled",
    "error_for_code",
]


class FlexiqError(Exception):
    """Base class of every flexiq error; ``code`` names the kind."""

    code: str = "FLEXIQ"

    def __init__(self, message: str, *, job_id: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.job_id = job_id

    def __str__(self) -> str:
        # KeyError would otherwise print the message quoted, as if it were a key.
        return self.message


class NotFound(FlexiqError, KeyError):
    """A dead letter, setting or other named thing does not exist."""

    code = "NOT_FOUND"


class JobNotFound(NotFound):
    """No job in this namespace has the id given."""

    code = "NOT_FOUND"


class InvalidArgument(FlexiqError, ValueError):
    """Malformed or out-of-range input: nothing was written."""

    code = "INVALID_ARGUMENT"


class WrongType(InvalidArgument, TypeError):
    """An argument of the wrong type (a string for a count, a ``bool`` for a priority, a
    number for an id): an :class:`InvalidArgument`, and a ``TypeError`` as Python's own wrong
    types are. Nothing was written."""

    code = "INVALID_ARGUMENT"


class QueueFull(FlexiqError):
    """The queue's ``max_pending`` admission cap refused the enqueue."""

    code = "QUEUE_FULL"


class TaskRevoked(FlexiqError):
    """The task is revoked (``Queue.revoke_task``): enqueues of it, retries of its dead
    letters and replays of its jobs are refused until ``Queue.unrevoke_task``. Nothing was
    written. ``task`` is the revoked task's name."""

    code = "TASK_REVOKED"

    def __init__(self, message: str, *, job_id: Optional[str] = None, task: Optional[str] = None) -> None:
        super().__init__(message, job_id=job_id)
        self.task = task


class ContractTooOld(FlexiqError):
    """The storage's contract floor is above the level this build speaks."""

    code = "CONTRACT_TOO_OLD"


class Superseded(FlexiqError):
    """A fenced write lost to a newer attempt of the same job."""

    code = "SUPERSEDED"


class Conflict(FlexiqError):
    """The current state does not allow the operation (a busy lease, a task rate limit that
    disagrees with its queue's, a worker run twice)."""

    code = "CONFLICT"


class Unsupported(FlexiqError):
    """This store or build cannot do the operation."""

    code = "UNSUPPORTED"


class Closed(FlexiqError):
    """The queue handle was closed."""

    code = "CLOSED"


class FlexiqTimeout(FlexiqError, TimeoutError):
    """A wait ran out of time (``result(timeout=...)``, ``stream``)."""

    code = "TIMEOUT"


class BackendError(FlexiqError):
    """The datastore failed; ``retryable`` says whether repeating the call may succeed."""

    code = "BACKEND"

    def __init__(self, message: str, *, job_id: Optional[str] = None, retryable: bool = False) -> None:
        super().__init__(message, job_id=job_id)
        self.retryable = retryable


class JobFailed(FlexiqError):
    """The awaited job ended ``failed`` or ``dead``; ``error`` is its last error."""

    code = "JOB_FAILED"

    def __init__(
        self,
        message: str,
        *,
        job_id: Optional[str] = None,
        status: Optional[str] = None,
        error: Optional[str] = None,
    ) -> None:
        super().__init__(message, job_id=job_id)
        self.status = status
        self.error = error


class JobCancelled(FlexiqError):
    """The awaited job was cancelled; ``error`` says why when known."""

    code = "JOB_CANCELLED"

    def __init__(self, message: str, *, job_id: Optional[str] = None, error: Optional[str] = None) -> None:
        super().__init__(message, job_id=job_id)
        self.error = error


_BY_CODE: Dict[str, Type[FlexiqError]] = {
    "NOT_FOUND": NotFound,
    "INVALID_ARGUMENT": InvalidArgument,
    "QUEUE_FULL": QueueFull,
    "TASK_REVOKED": TaskRevoked,
    "CONTRACT_TOO_OLD": ContractTooOld,
    "SUPERSEDED": Superseded,
    "CONFLICT": Conflict,
    "UNSUPPORTED": Unsupported,
    "CLOSED": Closed,
    "TIMEOUT": FlexiqTimeout,
    "BACKEND": BackendError,
    "JOB_FAILED": JobFailed,
    "JOB_CANCELLED": JobCancelled,
}


def error_for_code(code: str) -> Type[FlexiqError]:
    """The exception class for an engine error code (``FlexiqError`` for an unknown one)."""
    return _BY_CODE.get(code, FlexiqError)
