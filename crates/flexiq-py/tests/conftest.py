"""Fixtures: every store-backed test runs against SQLite, PostgreSQL and Redis.

Each test gets its own store: a fresh SQLite file in a temp dir, its own PostgreSQL schema
(dropped afterwards) or its own Redis key prefix (deleted afterwards with SCAN + UNLINK).
An unreachable server fails the test; nothing is skipped. Servers default to the local ones
and can be pointed elsewhere with FLEXIQ_PG_URL / FLEXIQ_REDIS_URL, the names the Rust suites
read (FLEXIQ_TEST_PG_URL / FLEXIQ_TEST_REDIS_URL are still read when those are unset, and are
deprecated).
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Callable, Iterator
from urllib.parse import urlparse

import pytest

from flexiq import Queue



def server_url(name: str, deprecated: str, default: str) -> str:
    """The server URL in ``name``, else in the deprecated ``deprecated``, else ``default``."""
    return os.environ.get(name) or os.environ.get(deprecated) or default


PG_URL = server_url("FLEXIQ_PG_URL", "FLEXIQ_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/test")
REDIS_URL = server_url("FLEXIQ_REDIS_URL", "FLEXIQ_TEST_REDIS_URL", "redis://127.0.0.1:6379")
STORES = ["sqlite", "postgres", "redis"]


def _drop_pg_schema(schema: str) -> None:
    u = urlparse(PG_URL)
    cmd = [
        "psql",
        "-h", u.hostname or "127.0.0.1",
        "-p", str(u.port or 5432),
        "-U", u.username or "postgres",
        "-d", (u.path or "/test").lstrip("/") or "test",
        "-v", "ON_ERROR_STOP=1",
        "-q",
        "-c", f'DROP SCHEMA IF EXISTS "{schema}" CASCADE',
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)


def _delete_redis_prefix(prefix: str) -> None:
    u = urlparse(REDIS_URL)
    base = ["redis-cli", "-h", u.hostname or "127.0.0.1", "-p", str(u.port or 6379)]
    keys = subprocess.run(
        base + ["--scan", "--pattern", "{" + prefix + "*"], check=True, capture_output=True, text=True, timeout=60
    ).stdout.split()
    for i in range(0, len(keys), 500):
        subprocess.run(base + ["UNLINK", *keys[i : i + 500]], check=True, capture_output=True, timeout=60)


@pytest.fixture(params=STORES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL naming a fresh, isolated store of each kind."""
    kind = request.param
    tag = "pyt" + uuid.uuid4().hex[:12]
    if kind == "sqlite":
        yield str(tmp_path / "tasks.db")
    elif kind == "postgres":
        try:
            yield f"{PG_URL}?schema={tag}"
        finally:
            _drop_pg_schema(tag)
    else:
        try:
            yield f"{REDIS_URL}?prefix={tag}"
        finally:
            _delete_redis_prefix(tag)


@pytest.fixture
def queue(store_url: str) -> Iterator[Queue]:
    """An open queue on a fresh store (closed afterwards)."""
    q = Queue(url=store_url)
    try:
        yield q
    finally:
        q.close()


@pytest.fixture
def sqlite_queue(tmp_path: Path) -> Iterator[Queue]:
    """A queue on a fresh SQLite file, for tests about the Python layer alone."""
    q = Queue(db_path=str(tmp_path / "tasks.db"))
    try:
        yield q
    finally:
        q.close()


def wait_until(pred: Callable[[], bool], timeout: float = 15.0, what: str = "condition") -> None:
    """Polls ``pred`` until it holds; fails the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@pytest.fixture
def until() -> Callable[..., None]:
    return wait_until


@pytest.fixture(scope="session")
def interop_bin() -> str:
    """The Rust side of the interop tests (``examples/interop.rs``), built once."""
    crate = Path(__file__).resolve().parent.parent
    cargo = os.environ.get("CARGO", "cargo")
    subprocess.run(
        [cargo, "build", "-q", "-p", "flexiq-py", "--example", "interop"],
        cwd=crate,
        check=True,
        timeout=1200,
    )
    target = os.environ.get("CARGO_TARGET_DIR") or str(crate.parent.parent / "target")
    path = Path(target) / "debug" / "examples" / "interop"
    assert path.exists(), f"interop example not found at {path}"
    return str(path)

