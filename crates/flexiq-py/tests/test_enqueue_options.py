"""The enqueue options, defined once: every entry point (enqueue, apply_async, enqueue_many
and the native call) takes the same names and refuses bad input with the same typed errors."""

from __future__ import annotations

import asyncio
import math

import pytest

from flexiq import InvalidArgument, Queue
from flexiq._options import OPTION_NAMES, EnqueueOptions

BAD_VALUES = [
    ({"delay": -1}, "delay"),
    ({"delay": math.nan}, "finite"),
    ({"timeout": math.inf}, "finite"),
    ({"timeout": 0}, "positive"),
    ({"retry_backoff": "1s"}, "retry_backoff"),
    ({"priority": 1.5}, "priority"),
    ({"priority": 2**40}, "priority"),
    ({"max_retries": "3"}, "max_retries"),
    ({"queue": 5}, "queue"),
    ({"metadata": "[1]"}, "metadata"),
    ({"depends_on": 5}, "depends_on"),
    ({"delay": 1, "eta": 5}, "delay or eta"),
]


def test_the_option_names_are_the_typed_dicts_keys() -> None:
    assert set(OPTION_NAMES) == set(EnqueueOptions.__annotations__)
    assert {"delay", "lifo", "dedup"} <= set(OPTION_NAMES) and len(OPTION_NAMES) == 13


def test_every_entry_point_takes_every_option_left_unset(sqlite_queue: Queue) -> None:
    q = sqlite_queue
    t = q.task(name="eo.t")(lambda: None)
    unset = {name: None for name in OPTION_NAMES}
    jobs = [q.enqueue("eo.t", **unset), t.apply_async(**unset)]  # type: ignore[arg-type]
    jobs += q.enqueue_many([{"task": t, **unset}, {"task": "eo.t", **unset}])
    for j in jobs:
        job = q.get_job(j.id)
        assert job is not None and (job.queue, job.priority, job.max_retries) == ("default", 0, 3)


def test_bad_values_are_the_same_invalid_argument_everywhere(sqlite_queue: Queue) -> None:
    q = sqlite_queue
    t = q.task(name="eo.bad")(lambda: None)
    for bad, word in BAD_VALUES:
        for call in (
            lambda: q.enqueue("eo.bad", **bad),
            lambda: t.apply_async(**bad),
            lambda: q.enqueue_many([{"task": t, **bad}]),
        ):
            with pytest.raises(InvalidArgument) as e:
                call()
            assert word in str(e.value), str(e.value)
    assert sum(q.stats().values()) == 0, "nothing was written"


def test_unknown_option_names_are_refused_like_a_signature_would(sqlite_queue: Queue) -> None:
    q = sqlite_queue
    t = q.task(name="eo.unknown")(lambda: None)
    with pytest.raises(TypeError, match="enqueue\\(\\) got an unexpected keyword argument 'colour'"):
        q.enqueue("eo.unknown", colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="apply_async\\(\\) got an unexpected keyword argument 'colour'"):
        t.apply_async(colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="colour"):
        asyncio.run(t.aapply_async(colour="red"))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="colour"):
        asyncio.run(q.aenqueue("eo.unknown", colour="red"))  # type: ignore[call-arg]
    with pytest.raises(InvalidArgument, match="colour"):
        q.enqueue_many([{"task": t, "colour": "red"}])
    assert sum(q.stats().values()) == 0


def test_the_native_call_converts_one_options_dict(sqlite_queue: Queue) -> None:
    native = sqlite_queue._native
    job_id = native.enqueue("eo.native", b"{}", {"queue": "nq", "priority": 4, "timeout_ms": 1500, "delay_ms": 0})
    job = sqlite_queue.get_job(job_id)
    assert job is not None and (job.queue, job.priority, job.timeout_ms) == ("nq", 4, 1500)
    assert sqlite_queue.get_job(native.enqueue("eo.native", b"{}")) is not None  # no options: defaults
    for bad, word in [
        ({"priority": "high"}, "priority must be an integer, not str"),
        ({"priority": 2**70}, "out of range"),
        ({"delay_ms": -1}, "must not be negative"),
        ({"timeout_ms": 0}, "must be positive"),
        ({"depends_on": "abc"}, "depends_on must be a list of job ids"),
        ({"delay": 5}, 'unknown enqueue option "delay"'),
    ]:
        with pytest.raises(InvalidArgument) as e:
            native.enqueue("eo.native", b"{}", bad)
        assert word in str(e.value), str(e.value)
    with pytest.raises(InvalidArgument, match="options must be a dict"):
        native.enqueue_many([{"task": "eo.native", "payload": b"{}", "options": [1]}])
    with pytest.raises(InvalidArgument, match="item 0.*unknown item key"):
        native.enqueue_many([{"task": "eo.native", "priority": 1}])
    assert sqlite_queue.stats()["pending"] == 2
