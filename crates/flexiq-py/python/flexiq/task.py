"""``Task``: a function registered with ``@queue.task()`` and the ways to enqueue it.

``fn.delay(*args, **kwargs)`` enqueues with the task's defaults; ``fn.apply_async(...)``
overrides them per call. Calling the task directly runs the function in-process. The
enqueue path is kept short (options are resolved once, at registration) because producers
call it in tight loops.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple

from . import _flexiq
from ._options import EnqueueOptions, check_option_names, native_options
from ._units import seconds_to_ms
from .exceptions import InvalidArgument
from .result import JobResult

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .queue import Queue

__all__ = ["Task", "call_args"]


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
        self.queue = queue
        self.fn = fn
        self.name: str = name or f"{fn.__module__}.{fn.__qualname__}"
        self.queue_name = queue_name
        self.priority = priority
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.timeout = timeout
        seconds_to_ms("soft_timeout", soft_timeout, positive=True)
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
        self._defaults = native_options(
            {
                "queue": queue_name,
                "priority": priority,
                "max_retries": max_retries,
                "retry_backoff": retry_backoff,
                "timeout": timeout,
                "group_key": group_key,
            }
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
        return JobResult(q, q._native.enqueue(self.name, payload, self._defaults))

    def apply_async(
        self, args: Sequence[Any] = (), kwargs: Optional[Dict[str, Any]] = None, **options: Unpack[EnqueueOptions]
    ) -> JobResult:
        """Enqueues with per-call options (:class:`flexiq._options.EnqueueOptions`): ``delay``
        (seconds) or ``eta`` (datetime or Unix seconds), ``priority``, ``unique_key`` (a live
        job with the key is returned instead), ``metadata`` (dict or JSON text),
        ``depends_on`` (ids or JobResults that must complete first), ``queue``,
        ``max_retries``, ``timeout`` and ``retry_backoff`` (seconds), ``group_key`` (the
        job's fairness group) and ``lifo`` (claimed ahead of the FIFO jobs of its priority,
        newest first; not with a delay). Unset options take the task's defaults."""
        check_option_names("apply_async", options)
        q = self.queue
        opts = self.call_options(**options)
        payload = q.serializer.dumps_call(*call_args(args, kwargs))
        return JobResult(q, q._native.enqueue(self.name, payload, opts))

    def call_options(self, **options: Unpack[EnqueueOptions]) -> Dict[str, Any]:
        """The engine options of one enqueue: the task's defaults overridden by ``options``
        (the keyword options of :meth:`apply_async`)."""
        opts = dict(self._defaults)
        opts.update(native_options(options))
        return opts

    async def adelay(self, *args: Any, **kwargs: Any) -> JobResult:
        """Async twin of :meth:`delay`."""
        from ._aio import run_blocking

        return await run_blocking(self.delay, *args, **kwargs)

    async def aapply_async(
        self, args: Sequence[Any] = (), kwargs: Optional[Dict[str, Any]] = None, **options: Unpack[EnqueueOptions]
    ) -> JobResult:
        """Async twin of :meth:`apply_async`."""
        from ._aio import run_blocking

        return await run_blocking(self.apply_async, args, kwargs, **options)
