"""Types of :mod:`flexiq._queue.forward`: the calls of :class:`flexiq.Queue` forwarded to the
native queue as they are.

Each forwarder is made at import time from a ``NativeQueue`` method (see ``forward.py``); this
stub is what type checkers see. The body of ``NativeCalls`` is written by ``tools/aio_stub.py``,
which copies each forwarded method's declaration from ``_flexiq.pyi`` (run it after adding a
native method); stubtest checks every line against the made forwarders.
"""

from typing import Any, Callable, Iterable, Mapping, Optional, TypeVar

__all__ = ["INTERNAL", "NativeCalls", "forward_native", "forwarder"]

C = TypeVar("C", bound=type)

INTERNAL: Mapping[str, str]

def forwarder(name: str, method: Any, holder: str = "NativeCalls") -> Callable[..., Any]: ...
def forward_native(
    native: type = ..., *, internal: Iterable[str] = ..., into: Optional[type] = None
) -> Callable[[C], C]: ...

# Written by tools/aio_stub.py from here on.
class NativeCalls:
    # jobs
    def is_job_in_state(self, job_id: str, status: str) -> bool: ...
    # schedulers: job schedulers and the job each slot enqueues
    def remove_job_scheduler(self, scheduler_id: str) -> bool: ...
    def count_job_schedulers(self) -> int: ...
    # events: the namespace's events stream, custom events, trimming and the switch
    def last_event_id(self) -> Optional[str]: ...
    def trim_events(self, max_len: int, *, max_age_ms: Optional[int] = None) -> int: ...
    def set_events_enabled(self, enabled: bool) -> None: ...
    def events_enabled(self) -> bool: ...
