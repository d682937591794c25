"""The events stream of :class:`flexiq.Queue`, as ``flexiq-runtime``'s ``queue/events.rs``:
every state change the store committed in the namespace, in order and from any process, plus
custom events (:meth:`EventsMixin.publish_event`).

:meth:`EventsMixin.events` is the reader most code wants: an iterator of
:class:`~flexiq.Event` values that waits on the store between batches and resumes after a
saved id without losing or repeating an event. ``last_event_id``, ``trim_events``,
``set_events_enabled`` and ``events_enabled`` convert nothing and are the native calls as they
are (:mod:`flexiq._queue.forward`).

Waits are in **milliseconds** (``block_ms``), as an event's ids and times are the engine's.
No call blocks in native code for long: :meth:`~EventsMixin.read_events` reads in slices of
at most :data:`READ_SLICE_MS`, and an :class:`EventIterator` waits for its next event in
slices of :data:`NEXT_SLICE_MS`, so Ctrl-C (``KeyboardInterrupt``) reaches a waiting reader
promptly, and a cancelled ``aevents`` / ``aread_events`` frees its thread as soon. The
async forms are written here rather than made by :func:`flexiq._aio.async_twins` for that
reason. A wrong type is a :class:`~flexiq.WrongType` (an :class:`~flexiq.InvalidArgument`
that is also a ``TypeError``); a wrong value an :class:`~flexiq.InvalidArgument`; both are
raised before anything is read.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .. import _flexiq
from .._aio import run_blocking
from .._args import integer
from ..exceptions import Closed, FlexiqError, InvalidArgument, WrongType
from ..models import Event
from .base import QueueBase

__all__ = ["NEXT_SLICE_MS", "READ_SLICE_MS", "EventIterator", "EventsMixin"]

#: Longest single store read of ``read_events`` / ``aread_events`` (ms).
READ_SLICE_MS = 1000
#: Longest single wait of an :class:`EventIterator` for its next event (ms). A wait that runs
#: out costs nothing: the read it waited on carries on inside the stream.
NEXT_SLICE_MS = 250

def _opt_str(what: str, value: Any) -> Optional[str]:
    if value is not None and not isinstance(value, str):
        raise WrongType(f"{what} must be a string or None, not {type(value).__name__}")
    return value


def _block_ms(value: Any, low: int) -> int:
    ms = integer("block_ms", value)
    if not low <= ms <= _flexiq.MAX_EVENTS_BLOCK_MS:
        raise InvalidArgument(f"block_ms {ms} must be between {low} and {_flexiq.MAX_EVENTS_BLOCK_MS}")
    return ms


def _kinds(kinds: Any) -> Optional[List[str]]:
    """The kinds filter as a list of names; a bare string, an empty filter or a name that is not
    a string are refused (the engine checks the names themselves)."""
    if kinds is None:
        return None
    if isinstance(kinds, (str, bytes)) or not isinstance(kinds, (list, tuple, set, frozenset)):
        raise WrongType(f"kinds must be a list of kind or event names, not {type(kinds).__name__}")
    names = list(kinds)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise WrongType(f"kinds must hold names (strings), not {type(bad[0]).__name__}")
    if not names:
        raise InvalidArgument("kinds must name at least one kind; give None for every event")
    return names


def _event(d: Dict[str, Any]) -> Event:
    return Event(**d)


def _read_args(after: Any, block_ms: Any, limit: Any) -> Tuple[Optional[str], int, int]:
    return _opt_str("after", after), _block_ms(block_ms, 0), integer("limit", limit)


def _slices(block_ms: int) -> Iterator[int]:
    """The waits (ms) of one read of up to ``block_ms``: the first at once, each later one what
    is left, :data:`READ_SLICE_MS` at most; 0 waits once without blocking."""
    deadline = time.monotonic() + block_ms / 1000
    wait = min(block_ms, READ_SLICE_MS)
    while True:
        yield wait
        left = math.ceil((deadline - time.monotonic()) * 1000)
        if left <= 0:
            return
        wait = min(left, READ_SLICE_MS)


class EventIterator(Iterator[Event]):
    """The open events stream :meth:`flexiq.Queue.events` returns: iterate it for
    :class:`~flexiq.Event` values, as they commit. It never ends by itself; leave the loop with
    ``break`` (or Ctrl-C) and :meth:`close` it, or use it as a context manager. A dropped
    iterator closes itself, and one closed from another thread while it waits ends there.
    After an error from the store (raised once, e.g. :class:`~flexiq.Closed` when the queue
    was closed), iteration ends."""

    def __init__(self, native: _flexiq.EventIter) -> None:
        self._native: Optional[_flexiq.EventIter] = native

    def __iter__(self) -> "EventIterator":
        return self

    def __next__(self) -> Event:
        native = self._native
        if native is None:
            raise StopIteration
        while True:
            try:
                d = native.next_within(NEXT_SLICE_MS)
            except Closed:
                if self._native is None:  # closed from another thread while it waited
                    raise StopIteration from None
                self._native = None
                raise
            except FlexiqError:
                self._native = None  # the stream failed: it is over
                raise
            if d is not None:
                return _event(d)

    def close(self) -> None:
        """Stops the stream and releases its store resources; iteration ends."""
        native, self._native = self._native, None
        if native is not None:
            native.close()

    @property
    def closed(self) -> bool:
        """Whether the stream was closed or failed."""
        return self._native is None

    def __enter__(self) -> "EventIterator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class EventsMixin(QueueBase):
    """Publish, read and follow events (the newest id, trimming and the switch are forwarded)."""

    def publish_event(
        self, name: str, data: Any = None, *, job_id: Optional[str] = None, queue: Optional[str] = None
    ) -> str:
        """Appends a custom event ``name`` to the namespace's stream and returns its id.

        ``data`` is any JSON-able value (dicts, lists, strings, numbers, booleans, ``None``), as
        ``json.dumps`` encodes it, 64 KiB of JSON at most; readers get it back decoded as
        :attr:`Event.data <flexiq.Event.data>`. ``job_id`` and ``queue`` say what it is about
        (the job need not exist any more). ``name`` may not be a built-in kind's name
        (:data:`flexiq.EVENT_KINDS`, ``"custom"``), empty, over 200 bytes or hold a control
        character. Data that is not JSON (a set, an object, NaN) is an
        :class:`~flexiq.InvalidArgument`; with events switched off
        (:meth:`set_events_enabled`), :class:`~flexiq.Conflict`."""
        if not isinstance(name, str):
            raise WrongType(f"event name must be a string, not {type(name).__name__}")
        _opt_str("job_id", job_id)
        _opt_str("queue", queue)
        try:
            text = json.dumps(data, allow_nan=False, separators=(",", ":"))
        except TypeError as e:
            raise WrongType(f"data of event {name} is not JSON: {e}") from e
        except (ValueError, RecursionError) as e:
            raise InvalidArgument(f"data of event {name} is not JSON: {e}") from e
        return self._native.publish_event(name, text, job_id, queue)

    def read_events(self, after: Optional[str] = None, block_ms: int = 0, limit: int = 100) -> List[Event]:
        """Up to ``limit`` (1 to 10,000) events after the id ``after`` (``None``: from the
        oldest the store keeps), oldest first. When there are none yet it waits up to
        ``block_ms`` milliseconds (0 to 300,000; 0 returns at once) for one to commit, from
        any process, and returns what arrived: an empty list when nothing did. Pass the last
        event's id back as ``after`` to read on. An id that is not one of this store's is
        :class:`~flexiq.InvalidArgument`; one older than what trimming kept reads from the
        oldest kept. :meth:`events` does this loop for you."""
        after, block_ms, limit = _read_args(after, block_ms, limit)
        for wait in _slices(block_ms):
            rows = self._native.read_events(after, wait, limit)
            if rows:
                break
        return [_event(d) for d in rows]

    async def aread_events(self, after: Optional[str] = None, block_ms: int = 0, limit: int = 100) -> List[Event]:
        """Async twin of :meth:`read_events` (``block_ms`` in ms)."""
        after, block_ms, limit = _read_args(after, block_ms, limit)
        for wait in _slices(block_ms):
            rows = await run_blocking(self._native.read_events, after, wait, limit)
            if rows:
                break
        return [_event(d) for d in rows]

    def _open_events(
        self, after: Any, kinds: Any, from_start: Any, block_ms: Any, batch: Any
    ) -> Callable[[], _flexiq.EventIter]:
        """Checks the arguments of :meth:`events` and returns the call that opens the stream."""
        after = _opt_str("after", after)
        names = _kinds(kinds)
        if not isinstance(from_start, bool):
            raise WrongType(f"from_start must be a bool, not {type(from_start).__name__}")
        if after is not None and from_start:
            raise InvalidArgument("give after or from_start, not both")
        block, size = _block_ms(block_ms, 1), integer("batch", batch)
        native = self._native
        return lambda: native.events(after, names, from_start, block, size)

    def events(
        self,
        after: Optional[str] = None,
        kinds: Optional[Sequence[str]] = None,
        *,
        from_start: bool = False,
        block_ms: int = 5000,
        batch: int = 256,
    ) -> EventIterator:
        """The namespace's events stream, as an iterator of :class:`~flexiq.Event` values in
        commit order, from every process using the store::

            for ev in queue.events(kinds=["completed", "failed"]):
                print(ev.kind, ev.job_id)
                save(ev.id)  # later: queue.events(after=saved_id)

        By default it yields only events committed after this call; ``after=<id>`` resumes
        after a saved id (every later event once: nothing lost, nothing repeated), and
        ``from_start=True`` starts at the oldest event the store keeps. ``kinds`` keeps the
        named kinds (:data:`flexiq.EVENT_KINDS`) and custom event names (``"custom"`` keeps
        every custom event); ``None`` keeps everything. Each store read waits up to
        ``block_ms`` milliseconds (1 to 300,000) and fetches up to ``batch`` events (1 to
        10,000); between reads the iterator waits on the store, releasing the GIL, and
        Ctrl-C stops it within a fraction of a second.

        Every argument is checked here, before anything is yielded: a bad kind name, batch
        or wait, a malformed or foreign ``after`` id, or ``after`` with ``from_start`` raise
        :class:`~flexiq.InvalidArgument` (a wrong type is a ``TypeError`` too). The iterator
        never ends by itself; :meth:`EventIterator.close` it (or use ``with``) when done."""
        return EventIterator(self._open_events(after, kinds, from_start, block_ms, batch)())

    async def aevents(
        self,
        after: Optional[str] = None,
        kinds: Optional[Sequence[str]] = None,
        *,
        from_start: bool = False,
        block_ms: int = 5000,
        batch: int = 256,
    ) -> AsyncIterator[Event]:
        """Async twin of :meth:`events`: ``async for ev in queue.aevents(kinds=["completed"])``.
        The event loop keeps running while it waits. The arguments are checked, and the
        stream opened (where "only new events" starts), when iteration begins; to fix the
        start earlier, pass ``after=await queue.alast_event_id()``."""
        opener = self._open_events(after, kinds, from_start, block_ms, batch)
        native = await run_blocking(opener)
        try:
            while True:
                d = await run_blocking(native.next_within, NEXT_SLICE_MS)
                if d is not None:
                    yield _event(d)
        finally:
            native.close()  # never waits: a slice still running drops the stream itself
