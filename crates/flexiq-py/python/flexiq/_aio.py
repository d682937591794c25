"""The ``a``-prefixed async twins of every blocking :class:`flexiq.Queue` and
:class:`flexiq.WorkflowJobs` call.

A twin is made, never written: :func:`async_twins` (a class decorator on ``Queue`` and on
``WorkflowJobs``) walks the class's public blocking methods and gives the class's twin holder
(:class:`AsyncMixin` for ``Queue``, :class:`WorkflowAsyncMixin` for ``WorkflowJobs``) an
``a``-prefixed coroutine for each, with the blocking method's signature, that runs it on
flexiq's own thread pool (:func:`run_blocking`), where the engine releases the GIL, so the
event loop never stalls on storage. A new blocking method therefore gets its twin by itself,
a native call forwarded by :mod:`flexiq._queue.forward` included;
``_aio.pyi`` declares each twin's exact signature for type checkers, and is written the same
way (``tools/aio_stub.py`` walks the made twins; CI fails when the stub is not what it
writes, and stubtest when a signature disagrees).

Only the waits that may last are written by hand, beside their blocking forms
(``aresult`` and ``astream`` in :mod:`flexiq._queue.wait`, ``aread_events`` and ``aevents`` in
:mod:`flexiq._queue.events`): they cut a long wait into short
ones so a cancelled coroutine frees its thread within about a second.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Coroutine, Iterable, Optional, TypeVar

__all__ = ["AsyncMixin", "WorkflowAsyncMixin", "async_twin", "async_twins", "run_blocking"]

T = TypeVar("T")
C = TypeVar("C", bound=type)

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


def async_twin(
    name: str, blocking: Callable[..., Any], holder: str = "AsyncMixin"
) -> Callable[..., Coroutine[Any, Any, Any]]:
    """The ``a``-prefixed coroutine method that runs method ``name`` with :func:`run_blocking`.

    It looks ``name`` up on the instance at call time (so an override is what runs) and
    carries ``blocking``'s signature, so ``inspect.signature`` and stubtest see the real
    parameters rather than ``*args, **kwargs``. ``holder`` names the class it is set on."""

    async def twin(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await run_blocking(getattr(self, name), *args, **kwargs)

    twin.__name__ = "a" + name
    twin.__qualname__ = f"{holder}.a{name}"
    twin.__doc__ = f"Async twin of :meth:`{name}`."
    twin.__signature__ = inspect.signature(blocking)  # type: ignore[attr-defined]
    return twin


def _blocking_methods(cls: type, not_io: Iterable[str], into: type) -> Iterable[tuple]:
    skip = set(not_io)
    seen = set()
    for klass in cls.__mro__:
        if klass is object or issubclass(into, klass):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in skip or name in seen or not inspect.isfunction(value):
                continue
            seen.add(name)
            if not (inspect.iscoroutinefunction(value) or inspect.isasyncgenfunction(value)):
                yield name, value


def async_twins(*, not_io: Iterable[str] = (), into: Optional[type] = None) -> Callable[[C], C]:
    """Class decorator: gives ``into`` (a base of the decorated class; default
    :class:`AsyncMixin`) a twin of every public blocking method of the class and its bases,
    except the ``not_io`` ones (calls that do no I/O, such as registering a task). A twin
    written by hand wins."""
    not_io = tuple(not_io)
    holder = AsyncMixin if into is None else into

    def install(cls: C) -> C:
        if not issubclass(cls, holder):
            raise TypeError(f"{cls.__name__} must derive from {holder.__name__} to get async twins")
        for name, fn in _blocking_methods(cls, not_io, holder):
            if not hasattr(cls, "a" + name):
                setattr(holder, "a" + name, async_twin(name, fn, holder.__name__))
        return cls

    return install


class AsyncMixin:
    """Holds the async twins :func:`async_twins` makes (``astats`` beside ``stats``, ...)."""


class WorkflowAsyncMixin:
    """Holds the async twins of :class:`flexiq.WorkflowJobs` (``adequeue`` beside
    ``dequeue``, ...)."""
