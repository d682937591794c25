"""The calls of :class:`flexiq.Queue` that are the native call as it is, made rather than
written.

Most ``Queue`` calls convert something on the way (seconds to milliseconds, payloads through
the serializer, dicts to :mod:`flexiq.models` values) and are written in their area's module.
A read-only call that would only pass its arguments to ``NativeQueue`` and hand back what it
returns needs no Python of its own: :func:`forward_native`, a class decorator on ``Queue``
below :func:`flexiq._aio.async_twins`, gives :class:`NativeCalls` (a base of ``Queue``) one
forwarder for every public method of ``NativeQueue`` that ``Queue`` does not define and
:data:`INTERNAL` does not hold back. A forwarder calls ``self._native.<name>`` with the
arguments as given, carries the native method's docstring and the signature pyo3 records in
its ``__text_signature__``, and gets its ``a``-prefixed twin like any blocking call. Native
errors are already the classes of :mod:`flexiq.exceptions` (``src/errors.rs`` raises them), so
a forwarder raises what a written method would.

Type checkers see the forwarders in ``forward.pyi``, whose ``NativeCalls`` body
``tools/aio_stub.py`` copies from the ``NativeQueue`` declarations of ``_flexiq.pyi`` (it
writes their twins into ``_aio.pyi`` the same way; CI fails when either stub is stale).
"""

from __future__ import annotations

import inspect
import types
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Tuple, TypeVar

from .. import _flexiq

__all__ = ["INTERNAL", "NativeCalls", "forward_native", "forwarder"]

C = TypeVar("C", bound=type)

#: The public methods of ``NativeQueue`` that ``Queue`` deliberately does not offer, each with
#: the reason. A test fails when a name here is no longer on ``NativeQueue`` or has become a
#: ``Queue`` call, and when a ``NativeQueue`` method is neither here nor on ``Queue``.
INTERNAL: Mapping[str, str] = types.MappingProxyType(
    {
        "publish_partial": (
            "takes the partial as raw bytes, while Queue.stream decodes partials with the "
            "queue's serializer: a public form must encode its value first (a converting "
            "method, written in _queue/jobs.py); in a handler, current_job().publish(value)"
        ),
        "log": (
            "a job's log lines are written from its handler, current_job().log(message, "
            "level); neither SDK offers it on the queue (docs/reference.md)"
        ),
    }
)


class NativeCalls:
    """Holds the forwarders :func:`forward_native` makes for :class:`flexiq.Queue`."""


def _native_methods(native: type) -> Iterator[Tuple[str, Any]]:
    """The public methods of ``native`` (not its properties), by name."""
    for name in sorted(vars(native)):
        value = vars(native)[name]
        if not name.startswith("_") and inspect.ismethoddescriptor(value) and callable(value):
            yield name, value


def _signature(name: str, method: Any) -> inspect.Signature:
    """The forwarder's signature: the native one (read from pyo3's ``__text_signature__``) with
    the receiver an ordinary ``self``, as a method written in Python has it."""
    if getattr(method, "__text_signature__", None) is None:
        raise TypeError(f"NativeQueue.{name} records no signature to forward")
    sig = inspect.signature(method)
    params = list(sig.parameters.values())
    receiver = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sig.replace(parameters=[receiver] + params[1:])


def forwarder(name: str, method: Any, holder: str = "NativeCalls") -> Callable[..., Any]:
    """The method that calls ``self._native.<name>`` with its arguments as given and returns
    what it returns, carrying ``method``'s docstring and signature. ``holder`` names the class
    it is set on."""

    def forward(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._native, name)(*args, **kwargs)

    forward.__name__ = name
    forward.__qualname__ = f"{holder}.{name}"
    forward.__doc__ = method.__doc__
    forward.__signature__ = _signature(name, method)  # type: ignore[attr-defined]
    return forward


def _defined(cls: type) -> set:
    """Every name ``cls`` defines or declares (annotated attributes included), bases too."""
    names = set(dir(cls))
    for klass in cls.__mro__:
        names.update(vars(klass).get("__annotations__", {}))
    return names


def forward_native(
    native: type = _flexiq.NativeQueue,
    *,
    internal: Iterable[str] = INTERNAL,
    into: Optional[type] = None,
) -> Callable[[C], C]:
    """Class decorator: gives ``into`` (a base of the decorated class; default
    :class:`NativeCalls`) a :func:`forwarder` for every public method of ``native`` that the
    class does not define or declare and ``internal`` does not name. A method written by
    hand wins. Apply it below :func:`~flexiq._aio.async_twins` so the forwarders get twins."""
    held_back = frozenset(internal)
    holder = NativeCalls if into is None else into

    def install(cls: C) -> C:
        if not issubclass(cls, holder):
            raise TypeError(f"{cls.__name__} must derive from {holder.__name__} to get native forwarders")
        defined = _defined(cls)
        for name, method in _native_methods(native):
            if name not in defined and name not in held_back:
                setattr(holder, name, forwarder(name, method, holder.__name__))
        return cls

    return install
