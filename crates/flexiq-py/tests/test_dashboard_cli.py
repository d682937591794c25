"""``flexiq dashboard`` through the pip-installed console script (``python -m flexiq``): the
Rust CLI's dashboard runs in-process, serves the API and the pages on the address given,
refuses an exposed address with no credential, and ``set-password`` reads the password from
stdin when it is not a terminal."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional, Tuple

import pytest

PASSWORD = "dashboard cli password"


def _flexiq(*args: str, stdin: Optional[str] = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flexiq", *args], input=stdin, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A migrated SQLite store (the dashboard opens existing stores only)."""
    url = f"sqlite:{tmp_path / 'dash.db'}"
    done = _flexiq("--url", url, "migrate")
    assert done.returncode == 0, done.stderr
    return url


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> Tuple[int, str, str]:
    """Status, final URL (after redirects) and body of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.geturl(), r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, url, e.read().decode("utf-8")


def _post(url: str, body: Any) -> Tuple[int, Any]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


@contextmanager
def _dashboard(store: str, *extra: str) -> Iterator[str]:
    """Runs ``python -m flexiq dashboard`` on a free loopback port until it answers; yields its
    base URL and stops it afterwards."""
    port = _free_port()
    cmd = [sys.executable, "-m", "flexiq", "dashboard", "--url", store, "--bind", f"127.0.0.1:{port}", *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                _, err = proc.communicate()
                raise AssertionError(f"the dashboard exited with {proc.returncode}: {err}")
            try:
                with urllib.request.urlopen(f"{base}/api/v1/openapi.json", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the dashboard never answered on {base}")
            time.sleep(0.05)
        yield base
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def test_dashboard_serves_the_api_and_the_pages(store: str) -> None:
    with _dashboard(store, "--read-only") as base:
        status, _, text = _get(f"{base}/api/v1/openapi.json")
        doc = json.loads(text)
        assert status == 200 and doc["info"]["title"] == "flexiq dashboard API"
        assert "/api/v1/webhooks/{name}" in doc["paths"]
        status, url, html = _get(f"{base}/")
        assert (status, url) == (200, f"{base}/"), "an open loopback dashboard shows the overview"
        assert 'data-count="*:pending"' in html and 'name="csrf-token"' in html
        status, _, text = _get(f"{base}/api/v1/auth/session")
        session = json.loads(text)
        assert (session["auth_required"], session["read_only"], session["authenticated"]) == (False, True, True)
        # --read-only reached the server: a write is refused with its typed error.
        status, body = _post(f"{base}/api/v1/queues/emails/pause", {})
        assert (status, body["error"]["code"]) == (403, "read_only")


def test_an_exposed_bind_without_credentials_is_refused(store: str) -> None:
    done = _flexiq("dashboard", "--url", store, "--bind", "0.0.0.0:0")
    assert done.returncode != 0
    assert "refusing to serve on 0.0.0.0:0" in done.stderr and "set-password" in done.stderr, done.stderr


def test_set_password_reads_stdin_and_the_dashboard_then_asks_for_it(store: str) -> None:
    short = _flexiq("--url", store, "dashboard", "set-password", stdin="short\n")
    assert short.returncode == 2 and "at least 8 characters" in short.stderr, short.stderr
    done = _flexiq("--url", store, "dashboard", "set-password", stdin=PASSWORD + "\n")
    assert done.returncode == 0, done.stderr
    assert "password set" in done.stdout
    with _dashboard(store) as base:
        status, url, html = _get(f"{base}/")
        assert (status, url) == (200, f"{base}/login") and 'id="password"' in html
        assert json.loads(_get(f"{base}/api/v1/auth/session")[2])["auth_required"] is True
        status, body = _post(f"{base}/api/v1/auth/login", {"password": "not the password"})
        assert (status, body["error"]["code"]) == (401, "unauthorized")
        status, body = _post(f"{base}/api/v1/auth/login", {"password": PASSWORD})
        assert status == 200 and body["who"] == "password", body
