"""Verifying flexiq webhook deliveries on the receiving side.

Every delivery is a JSON ``POST`` whose ``flexiq-signature`` header reads
``t=<unix seconds>,v1=<hex>[,v1=<hex>]``: each ``v1`` is the HMAC-SHA256 of ``"<t>.<body>"``
under one of the hook's secrets (two while a secret is being rotated). A receiver checks the
raw body it got, byte for byte, against the secret or secrets it knows::

    from flexiq.webhooks import verify_signature, WebhookSignatureError

    try:
        verify_signature(request.body, request.headers["flexiq-signature"], secret)
    except WebhookSignatureError:
        return 400

Only the standard library is used (``hmac``, ``hashlib``); signatures are compared in constant
time, and a timestamp more than ``tolerance`` seconds from now is refused so a captured
delivery cannot be replayed later.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Iterable, List, Optional, Union

from .exceptions import InvalidArgument

__all__ = ["SIGNATURE_HEADER", "DEFAULT_TOLERANCE", "WebhookSignatureError", "verify_signature"]

#: The header carrying the signature.
SIGNATURE_HEADER = "flexiq-signature"

#: Seconds the signed timestamp may differ from now by default.
DEFAULT_TOLERANCE = 300


class WebhookSignatureError(InvalidArgument):
    """The signature header is malformed, too old, or matches none of the secrets."""


def _as_bytes(value: Union[bytes, bytearray, memoryview, str]) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _parse(header: str) -> "tuple[int, List[str]]":
    timestamp: Optional[int] = None
    signatures: List[str] = []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            raise WebhookSignatureError(f"signature header part {part!r} is not key=value")
        if key == "t":
            try:
                timestamp = int(value)
            except ValueError:
                raise WebhookSignatureError(f"signature timestamp {value!r} is not a number") from None
        elif key == "v1":
            signatures.append(value.lower())
    if timestamp is None:
        raise WebhookSignatureError("signature header has no timestamp t=")
    if not signatures:
        raise WebhookSignatureError("signature header has no v1= signature")
    return timestamp, signatures


def verify_signature(
    payload: Union[bytes, bytearray, memoryview, str],
    header: str,
    secrets: Union[str, bytes, Iterable[Union[str, bytes]]],
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> int:
    """Checks a delivery: ``payload`` is the raw request body, ``header`` the
    ``flexiq-signature`` value, ``secrets`` one secret or several (any may match).

    ``tolerance`` is in seconds; ``now`` (Unix seconds) defaults to the wall clock.
    Returns the signed timestamp (Unix seconds); raises :class:`WebhookSignatureError`
    saying which check failed.
    """
    if tolerance < 0:
        raise WebhookSignatureError(f"tolerance {tolerance} s must not be negative")
    keys = [_as_bytes(secrets)] if isinstance(secrets, (str, bytes)) else [_as_bytes(s) for s in secrets]
    if not keys:
        raise WebhookSignatureError("no secret given to verify against")
    timestamp, signatures = _parse(header)
    current = int(time.time() if now is None else now)
    if abs(current - timestamp) > tolerance:
        raise WebhookSignatureError(
            f"signature timestamp {timestamp} is more than {tolerance} s from now ({current})"
        )
    signed = str(timestamp).encode("ascii") + b"." + _as_bytes(payload)
    expected = [hmac.new(k, signed, hashlib.sha256).hexdigest() for k in keys]
    matched = False
    # Every pair is compared, so the time taken does not tell which secret matched.
    for candidate in signatures:
        for want in expected:
            matched |= hmac.compare_digest(candidate, want)
    if not matched:
        raise WebhookSignatureError("no signature matches any of the secrets")
    return timestamp
