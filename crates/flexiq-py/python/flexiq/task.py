"""``Task``: a function registered with ``@queue.task()`` and the ways to enqueue it.

``fn.delay(*args, **kwargs)`` enqueues with the task's defaults; ``fn.apply_async(...)``
overrides them per call. Calling the task directly runs the function in-process. The
enqueue path is kept short (options are resolved once, at registration) because producers
call it in tight loops.
"""

from __future__ import annotations

import datetime as _dt
import inspect
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple, Union

from . import _flexiq
from .exceptions import InvalidArgument
from .result import JobResult

if TYPE_CHECKING:
    from .queue import Queue

__all__ = ["Task", "call_args", "enqueue_options"]


def _run_at_ms(eta: Any) -> Optional[int]:
    """``eta`` (a datetime, or Unix seconds) as Unix ms."""
    if eta is None:
        return None
    if isinstance(eta, _dt.datetime):
        if eta.tzinfo is None:
            eta = eta.astimezone()
        return int(eta.timestamp() * 1000)
    if isinstance(eta, bool) or not isinstance(eta, (int, float)):
        raise InvalidArgument(f"eta must be a datetime or Unix seconds, not {type(eta).__name__}")
    if eta < 0:
        raise InvalidArgument(f"eta {eta} is before the Unix epoch")
    return int(eta * 1000)


def _int(what: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{what} must be an integer, not {type(value).__name__}")
    return value


def _str(what: str, value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"{what} must be a string, not {type(value).__name__}")
    return value


def enqueue_options(
    *,
    queue: Optional[str] = None,
    priority: Optional[int] = None,
    delay: Optional[float] = None,
    eta: Any = None,
    max_retries: Optional[int] = None,
    retry_backoff: Optional[float] = None,
    timeout: Optional[float] = None,
    unique_key: Optional[str] = None,
    metadata: Union[Dict[str, Any], str, None] = None,
    depends_on: Optional[Sequence[Union[str, JobResult]]] = None,
    group_key: Optional[str] = None,
) -> Dict[str, Any]:
    """Python-facing options (seconds, datetimes, dicts) as the engine's keyword arguments
    (ms, Unix ms, JSON text); only the options given are included. A wrong type is
    :class:`~flexiq.InvalidArgument`, like a wrong value."""
    from .queue import metadata_text, to_ms

    if delay is not None and eta is not None:
        raise InvalidArgument("give delay or eta, not both")
    opts: Dict[str, Any] = {}
    if queue is not None:
        opts["queue"] = _str("queue", queue)
    if priority is not None:
        opts["priority"] = _int("priority", priority)
    if delay is not None:
        opts["delay_ms"] = to_ms("delay", delay)
    if eta is not None:
        opts["run_at"] = _run_at_ms(eta)
    if max_retries is not None:
        opts["max_retries"] = _int("max_retries", max_retries)
    if retry_backoff is not None:
        opts["backoff_ms"] = to_ms("retry_backoff", retry_backoff)
    if timeout is not None:
        t = to_ms("timeout", timeout)
        if not t:
            raise InvalidArgument(f"timeout {timeout} s must be positive")
        opts["timeout_ms"] = t
    if unique_key is not None:
        opts["unique_key"] = _str("unique_key", unique_key)
    if metadata is not None:
        opts["metadata"] = metadata_text(metadata)
    if depends_on is not None:
        if isinstance(depends_on, (str, JobResult)):
            depends_on = [depends_on]
        if not isinstance(depends_on, (list, tuple)):
            raise InvalidArgument(f"depends_on must be job ids or JobResults, not {type(depends_on).__name__}")
        opts["depends_on"] = [d.id if isinstance(d, JobResult) else _str("a dependency", d) for d in depends_on]
    if group_key is not None:
        opts["group_key"] = _str("group_key", group_key)
    return opts


def call_args(args: Any, kwargs: Any) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """``args`` and ``kwargs`` of one call, checked: a list or tuple, and a dict."""
    if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
        raise InvalidArgument(f"args must be a list or tuple, not {type(args).__name__}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise InvalidArgument(f"kwargs must be a dict, not {type(kwargs).__name__}")
    return tuple(args), dict(kwargs or {})


class Task:
    """A registered task. Call it to run locally; ``delay`` / ``apply_async`` to enqueue."""

    def __init__(
        self,
        queue: "Queue",
        fn: Callable[..., Any],
        *,
        name: Optional[str] = None,
        queue_name: Optional[str] = None,
        priority: Optional[int] = None,
        max_retries: Optional[int] = None,
        retry_backoff: Optional[float] = None,
        timeout: Optional[float] = None,
        soft_timeout: Optional[float] = None,
        rate_limit: Optional[str] = None,
        group_key: Optional[str] = None,
    ) -> None:
        if not callable(fn):
            raise InvalidArgument(f"task must be callable, not {type(fn).__name__}")
        from .queue import to_ms

        self.queue = queue
        self.fn = fn
        self.name: str = name or f"{fn.__module__}.{fn.__qualname__}"
        self.queue_name = queue_name
        self.priority = priority
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.timeout = timeout
        if soft_timeout is not None and not to_ms("soft_timeout", soft_timeout):
            raise InvalidArgument(f"soft_timeout {soft_timeout!r} must be a positive number of seconds")
        self.soft_timeout = soft_timeout
        if rate_limit is not None:
            _flexiq.parse_rate_limit(rate_limit)
            if queue_name is None:
                raise InvalidArgument(
                    f"rate_limit {rate_limit!r} needs queue=: the engine limits claims per queue, "
                    "so a rate-limited task runs on a queue of its own"
                )
        self.rate_limit = rate_limit
        self.group_key = group_key
        self.is_async = inspect.iscoroutinefunction(fn)
        self._defaults = enqueue_options(
            queue=queue_name,
            priority=priority,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            timeout=timeout,
            group_key=group_key,
        )
        self.__doc__ = fn.__doc__
        self.__name__ = getattr(fn, "__name__", self.name)
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return f"Task({self.name!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the function in this process (no queue involved)."""
        return self.fn(*args, **kwargs)

    def delay(self, *args: Any, **kwargs: Any) -> JobResult:
        """Enqueues ``task(*args, **kwargs)`` with the task's defaults."""
        q = self.queue
        payload = q.serializer.dumps_call(args, kwargs)
        return JobResult(q, q._native.enqueue(self.name, payload, **self._defaults))

    def apply_async(
        self,
        args: Sequence[Any] = (),
        kwargs: Optional[Dict[str, Any]] = None,
        *,
        delay: Optional[float] = None,
        eta: Any = None,
        priority: Optional[int] = None,
        unique_key: Optional[str] = None,
        metadata: Union[Dict[str, Any], str, None] = None,
        depends_on: Optional[Sequence[Union[str, JobResult]]] = None,
        queue: Optional[str] = None,
        max_retries: Optional[int] = None,
        timeout: Optional[float] = None,
        retry_backoff: Optional[float] = None,
        group_key: Optional[str] = None,
    ) -> JobResult:
        """Enqueues with per-call options: ``delay`` (seconds) or ``eta`` (datetime or Unix
        seconds), ``priority``, ``unique_key`` (a live job with the key is returned instead),
        ``metadata`` (dict or JSON text), ``depends_on`` (ids or JobResults that must complete
        first), ``queue``, ``max_retries``, ``timeout`` and ``retry_backoff`` (seconds) and
        ``group_key`` (the job's fairness group). Unset options take the task's defaults."""
        q = self.queue
        opts = self.call_options(
            delay=delay,
            eta=eta,
            priority=priority,
            unique_key=unique_key,
            metadata=metadata,
            depends_on=depends_on,
            queue=queue,
            max_retries=max_retries,
            timeout=timeout,
            retry_backoff=retry_backoff,
            group_key=group_key,
        )
        payload = q.serializer.dumps_call(*call_args(args, kwargs))
        return JobResult(q, q._native.enqueue(self.name, payload, **opts))

    def call_options(self, **options: Any) -> Dict[str, Any]:
        """The engine options of one enqueue: the task's defaults overridden by ``options``
        (the keyword options of :meth:`apply_async`)."""
        opts = dict(self._defaults)
        opts.update(enqueue_options(**options))
        return opts

    async def adelay(self, *args: Any, **kwargs: Any) -> JobResult:
        """Async twin of :meth:`delay`."""
        from ._aio import run_blocking

        return await run_blocking(self.delay, *args, **kwargs)

    async def aapply_async(self, *args: Any, **kwargs: Any) -> JobResult:
        """Async twin of :meth:`apply_async`."""
        from ._aio import run_blocking

        return await run_blocking(self.apply_async, *args, **kwargs)
