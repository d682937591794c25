"""How task arguments and results become the opaque bytes the engine stores.

The default is JSON: a payload is ``{"args": [...], "kwargs": {...}}`` and a result is the
JSON of the return value, so a Node producer and a Python worker (or the reverse) read each
other's jobs. Pickle is available by choice (``Queue(serializer="pickle")``) for arguments JSON
cannot express; only processes that trust every producer should enable it, since unpickling
runs code.
"""

from __future__ import annotations

import json
import pickle
from typing import Any, Dict, Protocol, Tuple, Union, runtime_checkable

from .exceptions import InvalidArgument

__all__ = ["Serializer", "JsonSerializer", "PickleSerializer", "resolve_serializer"]


@runtime_checkable
class Serializer(Protocol):
    """Turns task calls and results into bytes and back."""

    name: str

    def dumps_call(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> bytes:
        """The payload of a call ``task(*args, **kwargs)``."""
        ...

    def loads_call(self, payload: bytes) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        """The ``(args, kwargs)`` a payload carries."""
        ...

    def dumps(self, value: Any) -> bytes:
        """A result or partial as bytes."""
        ...

    def loads(self, data: bytes) -> Any:
        """The inverse of :meth:`dumps`."""
        ...


class JsonSerializer:
    """JSON payloads ``{"args": [...], "kwargs": {...}}``; the interoperable default."""

    name = "json"

    def __init__(self) -> None:
        self._encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
        self._decoder = json.JSONDecoder()

    def dumps_call(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> bytes:
        try:
            return self._encoder.encode({"args": args, "kwargs": kwargs}).encode()
        except (TypeError, ValueError) as e:
            raise InvalidArgument(f"task arguments are not JSON serializable: {e}") from None

    def loads_call(self, payload: bytes) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        try:
            obj = self._decoder.decode(payload.decode()) if payload else {}
        except (UnicodeDecodeError, ValueError) as e:
            raise InvalidArgument(f"payload is not JSON: {e}") from None
        if isinstance(obj, list):
            return tuple(obj), {}
        if not isinstance(obj, dict):
            # A bare JSON value from another producer is one positional argument.
            return (obj,), {}
        args = obj.get("args", [])
        kwargs = obj.get("kwargs", {})
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise InvalidArgument('payload must be {"args": [...], "kwargs": {...}}')
        return tuple(args), kwargs

    def dumps(self, value: Any) -> bytes:
        try:
            return self._encoder.encode(value).encode()
        except (TypeError, ValueError) as e:
            raise InvalidArgument(f"value is not JSON serializable: {e}") from None

    def loads(self, data: bytes) -> Any:
        try:
            return self._decoder.decode(data.decode())
        except (UnicodeDecodeError, ValueError) as e:
            raise InvalidArgument(f"stored value is not JSON: {e}") from None


class PickleSerializer:
    """Pickled ``(args, kwargs)`` and results: any picklable object, Python only."""

    name = "pickle"

    def dumps_call(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> bytes:
        try:
            return pickle.dumps((tuple(args), dict(kwargs)), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            raise InvalidArgument(f"task arguments cannot be pickled: {e}") from None

    def loads_call(self, payload: bytes) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        try:
            args, kwargs = pickle.loads(payload)
        except Exception as e:
            raise InvalidArgument(f"payload is not a pickled call: {e}") from None
        return tuple(args), dict(kwargs)

    def dumps(self, value: Any) -> bytes:
        try:
            return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            raise InvalidArgument(f"value cannot be pickled: {e}") from None

    def loads(self, data: bytes) -> Any:
        try:
            return pickle.loads(data)
        except Exception as e:
            raise InvalidArgument(f"stored value is not pickled: {e}") from None


def resolve_serializer(spec: Union[str, Serializer, None]) -> Serializer:
    """``"json"`` (default), ``"pickle"`` or an object implementing :class:`Serializer`."""
    if spec is None or spec == "json":
        return JsonSerializer()
    if spec == "pickle":
        return PickleSerializer()
    if isinstance(spec, str):
        raise InvalidArgument(f"unknown serializer {spec!r} (expected 'json', 'pickle' or a Serializer)")
    if isinstance(spec, Serializer):
        return spec
    raise InvalidArgument(f"serializer {spec!r} does not implement dumps_call/loads_call/dumps/loads")
