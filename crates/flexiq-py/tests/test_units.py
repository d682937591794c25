"""Seconds become milliseconds in one place (``flexiq._units.seconds_to_ms``): every
duration the API takes is refused the same way, with one message shape, when it is a wrong
type, negative, NaN or infinite."""

from __future__ import annotations

import math
from typing import Any, Callable, List, Tuple

import pytest

from flexiq import InvalidArgument, Queue
from flexiq._units import seconds_to_ms


def test_seconds_to_ms() -> None:
    assert seconds_to_ms("delay", None) is None
    assert seconds_to_ms("delay", 0) == 0
    assert seconds_to_ms("delay", 1.5) == 1500 and seconds_to_ms("delay", 2) == 2000
    assert seconds_to_ms("delay", 0.0004) == 1, "a positive duration never rounds down to 0 ms"
    assert seconds_to_ms("delay", 10**12) == 10**15
    for bad, shape in [
        (-1, "delay -1 s must not be negative"),
        (math.nan, "delay nan s must be finite"),
        (math.inf, "delay inf s must be finite"),
        (-math.inf, "delay -inf s must be finite"),
        (10**20, "delay 100000000000000000000 s is too large"),
    ]:
        with pytest.raises(InvalidArgument) as e:
            seconds_to_ms("delay", bad)
        assert str(e.value) == shape
    with pytest.raises(InvalidArgument, match="timeout 0 s must be positive"):
        seconds_to_ms("timeout", 0, positive=True)
    for wrong in ("1", True, [1], None.__class__):
        with pytest.raises(InvalidArgument) as e2:
            seconds_to_ms("delay", wrong)  # type: ignore[arg-type]
        assert isinstance(e2.value, TypeError) and "delay must be a number of seconds" in str(e2.value)


def _entry_points(q: Queue) -> List[Tuple[str, Callable[[Any], Any]]]:
    t = q.task(name="u.t")(lambda: None)
    return [
        ("delay", lambda v: q.enqueue("u.t", delay=v)),
        ("retry_backoff", lambda v: t.apply_async(retry_backoff=v)),
        ("timeout", lambda v: q.enqueue_many([{"task": t, "timeout": v}])),
        ("eta", lambda v: t.apply_async(eta=v)),
        ("soft_timeout", lambda v: q.task(name="u.soft", soft_timeout=v)(lambda: None)),
        ("timeout", lambda v: q.task(name="u.hard", timeout=v)(lambda: None)),
        ("timeout", lambda v: q.result("00000000-0000-7000-8000-000000000000", timeout=v)),
        ("poll", lambda v: q.stream("00000000-0000-7000-8000-000000000000", poll=v)),
        ("shutdown_timeout", lambda v: q.worker(shutdown_timeout=v)),
        ("lease", lambda v: q.worker(lease=v)),
        ("timeout", lambda v: q.worker().wait_ready(timeout=v)),
    ]


def test_every_duration_is_refused_with_one_message_shape(sqlite_queue: Queue) -> None:
    for what, call in _entry_points(sqlite_queue):
        for bad, tail in [(-2, "-2 s must not be negative"), (math.nan, "nan s must be finite"), (math.inf, "inf s must be finite")]:
            with pytest.raises(InvalidArgument) as e:
                call(bad)
            assert f"{what} {tail}" in str(e.value), (what, str(e.value))
        with pytest.raises(InvalidArgument) as e2:
            call("soon")
        assert f"{what} must be a {'datetime or Unix seconds' if what == 'eta' else 'number of seconds'}, not str" in str(
            e2.value
        ), (what, str(e2.value))
    assert sum(sqlite_queue.stats().values()) == 0


def test_a_wrong_type_of_wait_is_still_a_type_error(sqlite_queue: Queue) -> None:
    sqlite_queue.task(name="u.w")(lambda: None)
    for call in (
        lambda: sqlite_queue.result("00000000-0000-7000-8000-000000000000", timeout="soon"),
        lambda: sqlite_queue.worker(lease="soon"),
        lambda: sqlite_queue.worker().wait_ready(timeout="soon"),
    ):
        with pytest.raises(TypeError):
            call()  # type: ignore[arg-type]


def test_eta_nan_is_invalid_argument_not_a_crash(sqlite_queue: Queue) -> None:
    t = sqlite_queue.task(name="u.eta")(lambda: None)
    with pytest.raises(InvalidArgument, match="eta nan s must be finite"):
        t.apply_async(eta=math.nan)
    job = sqlite_queue.get_job(t.apply_async(eta=1.5).id)
    assert job is not None and job.run_at == 1500
