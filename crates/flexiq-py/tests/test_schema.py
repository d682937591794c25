"""Schema and the contract floor: migrate, auto_migrate=False, min_contract, set_min_contract."""

from __future__ import annotations

import pytest

import flexiq
from flexiq import InvalidArgument, Queue


def test_migrate_is_idempotent(queue: Queue) -> None:
    m = queue.migrate()
    assert set(m) == {"applied", "workflow_applied", "archived_jobs", "schemaless"}
    assert m["applied"] == [] and m["workflow_applied"] == []  # opened with auto_migrate
    assert queue.migrate()["applied"] == []


def test_auto_migrate_false(store_url: str) -> None:
    refused = False
    try:
        q = Queue(url=store_url, auto_migrate=False)
    except flexiq.Conflict as e:
        # PostgreSQL refuses fresh, unmigrated storage without DDL rights, naming the fix.
        refused = True
        assert "migrate" in str(e)
        Queue(url=store_url).close()  # migrated by a role that may create tables
        q = Queue(url=store_url, auto_migrate=False)
    try:
        m = q.migrate()
        if not refused and not m["schemaless"]:
            # Opened without DDL on fresh storage: the first migrate() is what creates the schema.
            assert m["applied"] != []
        assert q.migrate()["applied"] == []
        q.enqueue("t")
        assert q.stats()["pending"] == 1
    finally:
        q.close()


def test_unmigrated_sqlite_queries_fail_until_migrate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    q = Queue(db_path=str(tmp_path / "fresh.db"), auto_migrate=False)
    try:
        with pytest.raises(flexiq.Conflict, match="migrate"):
            q.stats()
        assert q.migrate()["applied"] != []
        assert q.stats()["pending"] == 0
    finally:
        q.close()


def test_contract_floor(queue: Queue) -> None:
    level = flexiq.contract_level()
    assert 1 <= queue.min_contract() <= level
    queue.set_min_contract(level)
    assert queue.min_contract() == level
    for bad in (0, -1, level + 1):
        with pytest.raises(InvalidArgument):
            queue.set_min_contract(bad)


def test_open_options_are_validated(store_url: str) -> None:
    for kwargs in ({"namespace": ""}, {"durability": "fast"}, {"max_pending": -3}, {"retention": {"x": 1}}):
        with pytest.raises(InvalidArgument):
            Queue(url=store_url, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        Queue(url="mysql://h/db")
    with pytest.raises(InvalidArgument):
        Queue(db_path="a.db", url=store_url)


def test_namespaces_are_isolated(store_url: str) -> None:
    a = Queue(url=store_url, namespace="ns_a", durability="full")
    b = Queue(url=store_url, namespace="ns_b")
    try:
        a.enqueue("t")
        a.pause("q")
        assert a.namespace == "ns_a" and b.stats()["pending"] == 0
        assert b.paused_queues() == []
    finally:
        a.close()
        b.close()
