"""The enqueue options, defined once.

:class:`EnqueueOptions` names every per-job option and its public type and unit (seconds,
datetimes, dicts, :class:`~flexiq.JobResult`). ``Queue.enqueue`` and ``Task.apply_async``
take them as keyword arguments typed by it, each job of ``Queue.enqueue_many`` carries them
as keys, and :func:`native_options` is the one place they become the engine's options dict
(milliseconds, Unix ms, JSON text) that the native ``enqueue`` / ``enqueue_many`` convert
once more, in Rust, into the engine's type (:func:`public_options` is the way back, for the
options a stored record reports). A wrong type is :class:`~flexiq.WrongType` (an
:class:`~flexiq.InvalidArgument`, like a wrong value); an unknown option name is a ``TypeError`` for keyword arguments and an
``InvalidArgument`` for a batch job's key. The ``dedup`` option is a :class:`DedupOptions`
dict; its window ``ttl_ms`` is milliseconds, as the store contract names it.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Dict, Literal, Mapping, Optional, Sequence, TypedDict, Union

from ._args import flag, integer, text
from ._units import seconds_to_ms
from .exceptions import InvalidArgument, WrongType
from .result import JobResult

__all__ = [
    "DEDUP_MODES",
    "DedupOptions",
    "EnqueueOptions",
    "OPTION_NAMES",
    "check_option_names",
    "metadata_text",
    "native_options",
    "public_options",
]

#: The dedup modes, in the engine's order (``DedupOptions.mode`` spells the same names).
DEDUP_MODES = ("simple", "throttle", "debounce", "keep_last_if_active")


class _DedupId(TypedDict):
    id: str


class DedupOptions(_DedupId, total=False):
    """The ``dedup`` option: what an enqueue does while another job holds key ``id`` (scoped
    to the namespace). ``mode`` is ``"simple"`` (the default: ignored while the holder is
    unfinished), ``"throttle"`` (ignored for ``ttl_ms`` after the holder was enqueued),
    ``"debounce"`` (ignored for ``ttl_ms``; ``extend`` restarts the window on each duplicate,
    ``replace`` gives a holder that has not started the duplicate's payload and options) or
    ``"keep_last_if_active"`` (one running job and one queued behind it with the newest
    payload). ``ttl_ms`` (milliseconds, 1 to a year) is required by throttle and debounce and
    refused by the others; ``extend`` and ``replace`` belong to debounce."""

    #: ``"simple"``, ``"throttle"``, ``"debounce"`` or ``"keep_last_if_active"``.
    mode: Optional[Literal["simple", "throttle", "debounce", "keep_last_if_active"]]
    #: The window in milliseconds (throttle and debounce only).
    ttl_ms: Optional[int]
    #: Debounce: each duplicate restarts the window.
    extend: Optional[bool]
    #: Debounce: a duplicate replaces the payload and options of a holder that has not started.
    replace: Optional[bool]


class EnqueueOptions(TypedDict, total=False):
    """The options of one enqueue; every one may be left out (or ``None``) for the default."""

    #: The queue (default ``"default"``, or the task's).
    queue: Optional[str]
    #: Higher runs first (default 0).
    priority: Optional[int]
    #: Seconds from now before the job may run; exclusive with ``eta``.
    delay: Optional[float]
    #: When the job may run: a datetime (naive means local time) or Unix seconds.
    eta: Union[_dt.datetime, float, None]
    #: Retries after the first attempt (default 3).
    max_retries: Optional[int]
    #: First retry delay in seconds, doubling.
    retry_backoff: Optional[float]
    #: Hard limit of one attempt, seconds.
    timeout: Optional[float]
    #: While a live job holds this key, enqueue returns that job instead.
    unique_key: Optional[str]
    #: A dict (dumped as JSON) or JSON object text.
    metadata: Union[Dict[str, Any], str, None]
    #: Job ids or JobResults that must complete first.
    depends_on: Union[str, JobResult, Sequence[Union[str, JobResult]], None]
    #: The job's fairness group.
    group_key: Optional[str]
    #: Claim it ahead of the FIFO jobs of its priority, the newest LIFO job first;
    #: exclusive with ``delay`` and ``eta``.
    lifo: Optional[bool]
    #: Deduplication by key and mode; exclusive with ``unique_key``.
    dedup: Optional[DedupOptions]


#: Every option name, in declaration order.
OPTION_NAMES = tuple(EnqueueOptions.__annotations__)
_NAMES = frozenset(OPTION_NAMES)


def check_option_names(where: str, options: Mapping[str, Any]) -> None:
    """Refuses a keyword argument that is not an option, as Python does for a signature."""
    for name in options:
        if name not in _NAMES:
            raise TypeError(f"{where}() got an unexpected keyword argument {name!r}")


_DEDUP_KEYS = tuple(DedupOptions.__annotations__)


def _dedup(spec: Any) -> Dict[str, Any]:
    """The ``dedup`` option as the engine's dict, its types checked (its rules, such as which
    modes take ``ttl_ms``, are the engine's)."""
    if not isinstance(spec, Mapping):
        raise WrongType(f"dedup must be a dict, not {type(spec).__name__}")
    unknown = sorted(str(k) for k in spec if k not in _DEDUP_KEYS)
    if unknown:
        raise InvalidArgument(f"dedup has unknown keys {unknown}: expected {', '.join(_DEDUP_KEYS)}")
    if spec.get("id") is None:
        raise InvalidArgument("dedup needs an id")
    out: Dict[str, Any] = {"id": text("dedup id", spec["id"])}
    mode = spec.get("mode")
    if mode is not None:
        if text("dedup mode", mode) not in DEDUP_MODES:
            raise InvalidArgument(f"unknown dedup mode {mode!r}: expected {', '.join(DEDUP_MODES)}")
        out["mode"] = mode
    if spec.get("ttl_ms") is not None:
        out["ttl_ms"] = integer("dedup ttl_ms", spec["ttl_ms"])
    for name in ("extend", "replace"):
        if spec.get(name) is not None:
            out[name] = flag(f"dedup {name}", spec[name])
    return out


def _run_at_ms(eta: Any) -> Optional[int]:
    """``eta`` (a datetime, or Unix seconds) as Unix ms."""
    if isinstance(eta, _dt.datetime):
        if eta.tzinfo is None:
            eta = eta.astimezone()
        return seconds_to_ms("eta", eta.timestamp())
    if isinstance(eta, bool) or not isinstance(eta, (int, float)):
        raise WrongType(f"eta must be a datetime or Unix seconds, not {type(eta).__name__}")
    return seconds_to_ms("eta", eta)


def metadata_text(metadata: Union[Dict[str, Any], str, None]) -> Optional[str]:
    """Metadata as JSON object text (a dict is dumped; text is checked by the engine)."""
    if metadata is None or isinstance(metadata, str):
        return metadata
    if isinstance(metadata, dict):
        try:
            return json.dumps(metadata, separators=(",", ":"))
        except (TypeError, ValueError) as e:
            raise InvalidArgument(f"metadata is not JSON serializable: {e}") from None
    raise WrongType(f"metadata must be a dict or JSON text, not {type(metadata).__name__}")


def native_options(options: Mapping[str, Any]) -> Dict[str, Any]:
    """Public options as the engine's options dict: ``queue``, ``priority``, ``delay_ms``,
    ``run_at`` (Unix ms), ``max_retries``, ``backoff_ms``, ``timeout_ms``, ``unique_key``,
    ``metadata`` (JSON text), ``depends_on`` (ids), ``group_key``, ``lifo``, ``dedup`` (a
    dict); only the options given (not ``None``) are included."""
    o = {k: v for k, v in options.items() if v is not None}
    if "delay" in o and "eta" in o:
        raise InvalidArgument("give delay or eta, not both")
    out: Dict[str, Any] = {}
    if "queue" in o:
        out["queue"] = text("queue", o["queue"])
    if "priority" in o:
        out["priority"] = integer("priority", o["priority"])
    if "delay" in o:
        out["delay_ms"] = seconds_to_ms("delay", o["delay"])
    if "eta" in o:
        out["run_at"] = _run_at_ms(o["eta"])
    if "max_retries" in o:
        out["max_retries"] = integer("max_retries", o["max_retries"])
    if "retry_backoff" in o:
        out["backoff_ms"] = seconds_to_ms("retry_backoff", o["retry_backoff"])
    if "timeout" in o:
        out["timeout_ms"] = seconds_to_ms("timeout", o["timeout"], positive=True)
    if "unique_key" in o:
        out["unique_key"] = text("unique_key", o["unique_key"])
    if "metadata" in o:
        out["metadata"] = metadata_text(o["metadata"])
    if "depends_on" in o:
        deps = o["depends_on"]
        if isinstance(deps, (str, JobResult)):
            deps = [deps]
        if not isinstance(deps, (list, tuple)):
            raise WrongType(f"depends_on must be job ids or JobResults, not {type(deps).__name__}")
        out["depends_on"] = [d.id if isinstance(d, JobResult) else text("a dependency", d) for d in deps]
    if "group_key" in o:
        out["group_key"] = text("group_key", o["group_key"])
    if "lifo" in o:
        out["lifo"] = flag("lifo", o["lifo"])
    if "dedup" in o:
        out["dedup"] = _dedup(o["dedup"])
    return out


def public_options(native: Mapping[str, Any]) -> Dict[str, Any]:
    """The inverse of :func:`native_options` for the options a stored record reports (a job
    scheduler's template): the engine's dict back in public names and units, so it can be
    given to an enqueue again. ``backoff_ms`` becomes ``retry_backoff`` and ``timeout_ms``
    ``timeout`` (seconds); ``queue``, ``priority``, ``max_retries``, ``metadata`` (JSON text)
    and ``group_key`` stay as they are. The backoff cap ``backoff_max_ms``, which no public
    option sets, is left out; so are options the record does not set."""
    out: Dict[str, Any] = {}
    for name in ("queue", "priority", "max_retries", "metadata", "group_key"):
        if native.get(name) is not None:
            out[name] = native[name]
    if native.get("backoff_ms") is not None:
        out["retry_backoff"] = native["backoff_ms"] / 1000
    if native.get("timeout_ms") is not None:
        out["timeout"] = native["timeout_ms"] / 1000
    return out
