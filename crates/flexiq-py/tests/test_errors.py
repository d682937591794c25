"""The exception hierarchy: one class per error kind, each with a stable code, deriving from
the matching built-in where natural."""

from __future__ import annotations

import flexiq
from flexiq import exceptions as ex


def test_hierarchy_and_codes() -> None:
    cases = {
        ex.JobNotFound: ("NOT_FOUND", KeyError),
        ex.NotFound: ("NOT_FOUND", KeyError),
        ex.InvalidArgument: ("INVALID_ARGUMENT", ValueError),
        ex.WrongType: ("INVALID_ARGUMENT", TypeError),
        ex.FlexiqTimeout: ("TIMEOUT", TimeoutError),
        ex.QueueFull: ("QUEUE_FULL", Exception),
        ex.TaskRevoked: ("TASK_REVOKED", Exception),
        ex.ContractTooOld: ("CONTRACT_TOO_OLD", Exception),
        ex.Superseded: ("SUPERSEDED", Exception),
        ex.Conflict: ("CONFLICT", Exception),
        ex.Unsupported: ("UNSUPPORTED", Exception),
        ex.Closed: ("CLOSED", Exception),
        ex.BackendError: ("BACKEND", Exception),
        ex.JobFailed: ("JOB_FAILED", Exception),
        ex.JobCancelled: ("JOB_CANCELLED", Exception),
    }
    for cls, (code, builtin) in cases.items():
        assert issubclass(cls, flexiq.FlexiqError) and issubclass(cls, builtin)
        assert cls.code == code
        assert getattr(flexiq, cls.__name__) is cls
    assert issubclass(ex.WrongType, ex.InvalidArgument)
    assert ex.error_for_code("QUEUE_FULL") is ex.QueueFull
    assert ex.error_for_code("TASK_REVOKED") is ex.TaskRevoked
    assert not issubclass(ex.TaskRevoked, ex.Conflict)
    assert ex.error_for_code("???") is ex.FlexiqError


def test_messages_are_not_quoted_like_keys() -> None:
    e = ex.JobNotFound("job 1 not found", job_id="1")
    assert str(e) == "job 1 not found" and e.job_id == "1"
    f = ex.JobFailed("job x dead: boom", job_id="x", status="dead", error="boom")
    assert (f.status, f.error) == ("dead", "boom")
    assert ex.BackendError("down", retryable=True).retryable is True
    r = ex.TaskRevoked("task mail.send is revoked", task="mail.send")
    assert (r.task, r.code, str(r)) == ("mail.send", "TASK_REVOKED", "task mail.send is revoked")


def test_unreachable_servers_raise_backend_errors() -> None:
    import pytest

    with pytest.raises(flexiq.FlexiqError) as e:
        flexiq.Queue(url="redis://127.0.0.1:1?prefix=nothing")
    assert e.value.code == "BACKEND"
