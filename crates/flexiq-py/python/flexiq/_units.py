"""Seconds as the engine's milliseconds, converted in this one place.

The public API takes durations in seconds (ints or floats) as the spec says; the engine
works in milliseconds. Every duration (and ``eta`` in Unix seconds) that crosses into the
engine goes through :func:`seconds_to_ms`, so a wrong type, a negative, NaN or infinite
value is refused the same way, with the same message shape, wherever it was given; the
native layer takes milliseconds only.
"""

from __future__ import annotations

from typing import Optional, Union

from .exceptions import InvalidArgument, WrongType

__all__ = ["NotSeconds", "seconds_to_ms"]

#: The longest duration the engine holds (ms): the largest signed 64-bit number.
_MAX_MS = 2**63 - 1


class NotSeconds(WrongType):
    """A duration that is not a number: a :class:`~flexiq.WrongType`."""


def seconds_to_ms(what: str, seconds: Union[int, float, None], *, positive: bool = False) -> Optional[int]:
    """Seconds (int or float) as whole milliseconds, rounded to the nearest (a positive
    value never rounds down to 0 ms); ``None`` stays ``None``. ``positive=True`` refuses 0.
    Errors read ``"<what> <value> s must ..."``."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise NotSeconds(f"{what} must be a number of seconds, not {type(seconds).__name__}")
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        raise InvalidArgument(f"{what} {seconds} s must be finite")
    if seconds < 0:
        raise InvalidArgument(f"{what} {seconds} s must not be negative")
    if positive and seconds == 0:
        raise InvalidArgument(f"{what} {seconds} s must be positive")
    ms = int(round(seconds * 1000))
    if ms > _MAX_MS:
        raise InvalidArgument(f"{what} {seconds} s is too large")
    return 1 if ms == 0 and seconds > 0 else ms
