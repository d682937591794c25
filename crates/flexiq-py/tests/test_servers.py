"""The test servers are named by the Rust suites' variables, the old names still read."""

from __future__ import annotations

import pytest

from conftest import server_url


def test_server_urls_prefer_the_shared_names(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FLEXIQ_PG_URL", "FLEXIQ_TEST_PG_URL"):
        monkeypatch.delenv(name, raising=False)
    assert server_url("FLEXIQ_PG_URL", "FLEXIQ_TEST_PG_URL", "postgres://local") == "postgres://local"
    monkeypatch.setenv("FLEXIQ_TEST_PG_URL", "postgres://old")
    assert server_url("FLEXIQ_PG_URL", "FLEXIQ_TEST_PG_URL", "postgres://local") == "postgres://old"
    monkeypatch.setenv("FLEXIQ_PG_URL", "postgres://new")
    assert server_url("FLEXIQ_PG_URL", "FLEXIQ_TEST_PG_URL", "postgres://local") == "postgres://new"
