"""The ``a``-prefixed async twins of every blocking :class:`flexiq.Queue` call.

A twin is made, never written: :func:`async_twins` (a class decorator on ``Queue``) walks the
class's public blocking methods and gives :class:`AsyncMixin` an ``a``-prefixed coroutine for
each, with the blocking method's signature, that runs it on flexiq's own thread pool
(:func:`run_blocking`), where the engine releases the GIL, so the event loop never stalls on
storage. A new blocking method therefore gets its twin by itself; ``_aio.pyi`` declares each
twin's exact signature for type checkers, and stubtest fails when the two disagree.

Only the waits that may last are written by hand (``aresult``, ``astream``): they are cut
into short waits so a cancelled coroutine frees its thread within about a second.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, AsyncIterator, Callable, Coroutine, Iterable, Optional, TypeVar

from .exceptions import FlexiqTimeout

__all__ = ["AsyncMixin", "async_twin", "async_twins", "run_blocking"]

T = TypeVar("T")
C = TypeVar("C", bound=type)

#: Longest single blocking wait of ``aresult`` / ``astream`` (s).
_SLICE_S = 1.0

_executor: Optional[ThreadPoolExecutor] = None


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=64, thread_name_prefix="flexiq-async")
    return _executor


async def run_blocking(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Runs a blocking flexiq call on flexiq's thread pool and awaits it."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_pool(), functools.partial(fn, *args, **kwargs))


def async_twin(name: str, blocking: Callable[..., Any]) -> Callable[..., Coroutine[Any, Any, Any]]:
    """The ``a``-prefixed coroutine method that runs method ``name`` with :func:`run_blocking`.

    It looks ``name`` up on the instance at call time (so an override is what runs) and
    carries ``blocking``'s signature, so ``inspect.signature`` and stubtest see the real
    parameters rather than ``*args, **kwargs``."""

    async def twin(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await run_blocking(getattr(self, name), *args, **kwargs)

    twin.__name__ = "a" + name
    twin.__qualname__ = f"AsyncMixin.a{name}"
    twin.__doc__ = f"Async twin of :meth:`{name}`."
    twin.__signature__ = inspect.signature(blocking)  # type: ignore[attr-defined]
    return twin


def _blocking_methods(cls: type, not_io: Iterable[str]) -> Iterable[tuple]:
    skip = set(not_io)
    seen = set()
    for klass in cls.__mro__:
        if klass is object or issubclass(AsyncMixin, klass):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in skip or name in seen or not inspect.isfunction(value):
                continue
            seen.add(name)
            if not (inspect.iscoroutinefunction(value) or inspect.isasyncgenfunction(value)):
                yield name, value


def async_twins(*, not_io: Iterable[str] = ()) -> Callable[[C], C]:
    """Class decorator: gives :class:`AsyncMixin` (a base of the decorated class) a twin of
    every public blocking method of the class and its bases, except the ``not_io`` ones
    (calls that do no I/O, such as registering a task). A twin written by hand wins."""
    not_io = tuple(not_io)

    def install(cls: C) -> C:
        if not issubclass(cls, AsyncMixin):
            raise TypeError(f"{cls.__name__} must derive from AsyncMixin to get async twins")
        for name, fn in _blocking_methods(cls, not_io):
            if not hasattr(AsyncMixin, "a" + name):
                setattr(AsyncMixin, "a" + name, async_twin(name, fn))
        return cls

    return install


class AsyncMixin:
    """Async twins of the blocking calls (``aresult`` beside ``result``, ...)."""

    async def aresult(self, job_id: str, timeout: Optional[float] = None, poll: Optional[float] = None) -> Any:
        """Async twin of :meth:`result`: awaits a job's result (``timeout`` seconds)."""
        result = getattr(self, "result")
        deadline = None if timeout is None else time.monotonic() + timeout
        if timeout is not None and timeout <= 0:
            return await run_blocking(result, job_id, timeout, poll)
        while True:
            left = _SLICE_S if deadline is None else min(_SLICE_S, deadline - time.monotonic())
            if left <= 0:
                return await run_blocking(result, job_id, 0.001, poll)
            try:
                return await run_blocking(result, job_id, left, poll)
            except FlexiqTimeout:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    async def astream(
        self, job_id: str, timeout: Optional[float] = None, poll: Optional[float] = None
    ) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`: async-iterates a job's partials (deserialized)."""
        it = await run_blocking(getattr(self, "_stream_native"), job_id, timeout, poll)
        loads = getattr(self, "serializer").loads
        done = object()
        while True:
            p = await run_blocking(next, it, done)
            if p is done:
                return
            yield loads(p["data"])
