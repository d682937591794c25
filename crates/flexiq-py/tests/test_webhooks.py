"""flexiq.webhooks.verify_signature against the vector the Rust signer produces."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from flexiq import InvalidArgument
from flexiq.webhooks import SIGNATURE_HEADER, WebhookSignatureError, verify_signature

# Produced by the Rust signer (flexiq_runtime::webhooks::sign) with secrets "old-secret" and
# "new-secret" at t=1700000000; the Rust and Node tests check the same vector.
BODY = b'{"hook":"orders","event":{"id":"42","name":"completed"}}'
HEADER = (
    "t=1700000000,"
    "v1=3113ed6bf24849df546b6c1ec7093607e7a8fff64df020e4203134875819bed1,"
    "v1=a3fb9b8c1f60182307ef3388c405eb6aebd8967f5d3c0bd1afd8eec32dae2a3b"
)
T = 1_700_000_000


def test_the_rust_vector_verifies_with_either_secret_of_a_rotation():
    assert SIGNATURE_HEADER == "flexiq-signature"
    assert verify_signature(BODY, HEADER, "old-secret", now=T) == T
    assert verify_signature(BODY, HEADER, "new-secret", now=T + 299) == T
    assert verify_signature(BODY.decode(), HEADER, ["unknown", b"new-secret"], now=T) == T


def test_a_wrong_secret_or_changed_body_is_refused():
    with pytest.raises(WebhookSignatureError, match="no signature matches"):
        verify_signature(BODY, HEADER, "another-secret", now=T)
    with pytest.raises(WebhookSignatureError, match="no signature matches"):
        verify_signature(BODY + b" ", HEADER, "old-secret", now=T)


def test_an_old_or_future_timestamp_is_refused():
    with pytest.raises(WebhookSignatureError, match="more than 300 s"):
        verify_signature(BODY, HEADER, "old-secret", now=T + 301)
    with pytest.raises(WebhookSignatureError, match="more than 10 s"):
        verify_signature(BODY, HEADER, "old-secret", now=T - 11, tolerance=10)


def test_a_fresh_signature_verifies_against_the_wall_clock():
    import time

    t = int(time.time())
    sig = hmac.new(b"k" * 16, f"{t}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert verify_signature(BODY, f"t={t},v1={sig}", "k" * 16) == t


@pytest.mark.parametrize(
    "header, reason",
    [
        ("v1=00", "no timestamp"),
        ("t=1700000000", "no v1"),
        ("t=soon,v1=00", "not a number"),
        ("garbage", "key=value"),
    ],
)
def test_malformed_headers_name_the_problem(header, reason):
    with pytest.raises(WebhookSignatureError, match=reason) as err:
        verify_signature(BODY, header, "old-secret", now=T)
    assert isinstance(err.value, InvalidArgument) and isinstance(err.value, ValueError)
    assert err.value.code == "INVALID_ARGUMENT"


def test_no_secret_is_refused():
    with pytest.raises(WebhookSignatureError, match="no secret"):
        verify_signature(BODY, HEADER, [], now=T)
