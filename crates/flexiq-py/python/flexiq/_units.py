"""Seconds as the engine's milliseconds, converted in this one place.

The public API takes durations in seconds (ints or floats) as the spec says; the engine
works in milliseconds. Every duration that crosses into the engine goes through
:func:`seconds_to_ms`, so a negative, NaN or infinite value is refused the same way with the
same message wherever it was given.
"""

from __future__ import annotations

from typing import Optional, Union

from .exceptions import InvalidArgument

__all__ = ["seconds_to_ms"]


def seconds_to_ms(what: str, seconds: Union[int, float, None]) -> Optional[int]:
    """Seconds (int or float) as whole milliseconds; ``None`` stays ``None``."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise InvalidArgument(f"{what} must be a number of seconds, not {type(seconds).__name__}")
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        raise InvalidArgument(f"{what} {seconds} s must be finite")
    if seconds < 0:
        raise InvalidArgument(f"{what} {seconds} s must not be negative")
    return int(round(seconds * 1000))
