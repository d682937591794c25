"""The checks of the values the Python layer reads itself, before the native call.

Most arguments go to the native layer as they are given, and its ``src/args.rs`` checks each
under its parameter's name. The Python layer reads a few values on its way (an option it
turns into milliseconds or JSON, a wait it slices, a stage it reshapes): it checks those here,
with the same rules and message shapes, so a wrong type is a :class:`~flexiq.WrongType` (an
:class:`~flexiq.InvalidArgument` that is also a ``TypeError``) and an integer no i64 holds an
:class:`~flexiq.InvalidArgument`, whichever layer saw it. A ``bool`` is never an integer here.
"""

from __future__ import annotations

from typing import Any, Optional

from .exceptions import InvalidArgument, WrongType

__all__ = ["I64", "flag", "integer", "optional_text", "text"]

#: The engine's integers: signed 64-bit.
I64 = (-(2**63), 2**63 - 1)


def integer(what: str, value: Any) -> int:
    """``value`` as an i64: :class:`~flexiq.WrongType` for anything but an ``int`` (a ``bool``
    included), :class:`~flexiq.InvalidArgument` for one no i64 holds."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise WrongType(f"{what} must be an integer, not {type(value).__name__}")
    if not I64[0] <= value <= I64[1]:
        raise InvalidArgument(f"{what} {value} is out of range")
    return value


def text(what: str, value: Any) -> str:
    """``value`` as a string; :class:`~flexiq.WrongType` for anything else."""
    if not isinstance(value, str):
        raise WrongType(f"{what} must be a string, not {type(value).__name__}")
    return value


def optional_text(what: str, value: Any) -> Optional[str]:
    """``None``, or ``value`` as a string."""
    return None if value is None else text(what, value)


def flag(what: str, value: Any) -> bool:
    """``value`` as a ``bool`` (not 0 or 1); :class:`~flexiq.WrongType` for anything else."""
    if not isinstance(value, bool):
        raise WrongType(f"{what} must be a bool, not {type(value).__name__}")
    return value
