"""Listings: list_jobs (plain / filtered, offset / keyset) and the archive."""

from __future__ import annotations

import subprocess
import time

import pytest

from flexiq import InvalidArgument, Page, Queue


def _fill(queue: Queue) -> list:
    ids = []
    for i in range(7):
        ids.append(
            queue.enqueue(
                "even" if i % 2 == 0 else "odd", args=[i], queue="qa" if i < 4 else "qb", metadata={"n": i}
            ).id
        )
        time.sleep(0.002)
    return ids


def test_list_jobs_filters_and_offsets(queue: Queue) -> None:
    ids = _fill(queue)
    newest_first = list(reversed(ids))
    assert [j.id for j in queue.list_jobs(limit=100)] == newest_first
    assert [j.id for j in queue.list_jobs(task="even")] == [i for k, i in enumerate(ids) if k % 2 == 0][::-1]
    assert {j.queue for j in queue.list_jobs(queue="qb")} == {"qb"}
    assert len(queue.list_jobs(status="pending", limit=3, offset=5)) == 2
    assert queue.list_jobs(status="completed") == []
    f = queue.list_jobs_filtered(metadata_contains='"n":3')
    assert [j.id for j in f] == [ids[3]]
    created = queue.get_job(ids[3]).created_at  # type: ignore[union-attr]
    later = queue.list_jobs_filtered(created_after=created, limit=100)
    assert set(j.id for j in later) == set(ids[3:])


def test_keyset_pages_walk_everything_once(queue: Queue) -> None:
    ids = _fill(queue)
    seen = []
    page = queue.list_jobs_after(limit=3)
    while True:
        assert isinstance(page, Page)
        seen += [j.id for j in page.items]
        if page.next_cursor is None:
            break
        page = queue.list_jobs_after(limit=3, after=page.next_cursor)
    assert sorted(seen) == sorted(ids) and len(seen) == len(ids)
    fp = queue.list_jobs_filtered_after(task="odd", limit=2)
    rest = queue.list_jobs_filtered_after(task="odd", limit=2, after=fp.next_cursor)
    assert len(fp.items) + len(rest.items) == 3


def test_bad_listing_input_is_invalid_argument(queue: Queue) -> None:
    _fill(queue)
    page = queue.list_jobs_after(limit=2)
    for bad in (
        lambda: queue.list_jobs(limit=0),
        lambda: queue.list_jobs(limit=-5),
        lambda: queue.list_jobs(offset=-1),
        lambda: queue.list_jobs(status="bogus"),
        lambda: queue.list_jobs_after(after="garbage!"),
        lambda: queue.list_jobs_after(task="odd", after=page.next_cursor),  # another filter
        lambda: queue.list_archived_after(after=page.next_cursor),  # another listing
        lambda: queue.list_jobs_filtered(created_after=10, created_before=5),
        lambda: queue.list_archived(limit=0),
        lambda: queue.list_jobs(limit=10_001),
    ):
        with pytest.raises(InvalidArgument):
            bad()


def test_archive_listings_start_empty(queue: Queue) -> None:
    assert queue.list_archived() == []
    p = queue.list_archived_after(limit=5)
    assert p.items == [] and p.next_cursor is None


def test_archive_listings_page_through_archived_jobs(queue: Queue, store_url: str, interop_bin: str) -> None:
    @queue.task(name="arch.t")
    def t(i: int) -> int:
        return i * 10

    done = [t.delay(i) for i in range(5)]
    live = queue.enqueue("arch.never-run", queue="arch-idle")
    with queue.worker(concurrency=1, queues=["default"]):
        assert [r.result(timeout=20) for r in done] == [0, 10, 20, 30, 40]
    # Archive as the cleaner would an hour later (the Rust side moves the clock).
    out = subprocess.run([interop_bin, "archive", store_url], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "5"
    ids = {r.id for r in done}

    everything = queue.list_archived(limit=100)
    assert {j.id for j in everything} == ids and len(everything) == 5
    assert all(j.status == "completed" and j.task == "arch.t" for j in everything)
    assert {j.result for j in everything} == {b"0", b"10", b"20", b"30", b"40"}
    finished = [j.finished_at or 0 for j in everything]
    assert finished == sorted(finished, reverse=True), "newest first"
    # offset pages cover the same list in order, once each
    paged = queue.list_archived(limit=2) + queue.list_archived(limit=2, offset=2) + queue.list_archived(limit=2, offset=4)
    assert [j.id for j in paged] == [j.id for j in everything]
    assert queue.list_archived(limit=2, offset=5) == []
    # keyset pages walk every archived job exactly once
    seen = []
    page = queue.list_archived_after(limit=2)
    while True:
        assert len(page.items) <= 2
        seen += [j.id for j in page.items]
        if page.next_cursor is None:
            break
        page = queue.list_archived_after(limit=2, after=page.next_cursor)
    assert sorted(seen) == sorted(ids) and len(seen) == 5
    # the job that never ran is not archived and still listed live
    assert live.id not in seen and [j.id for j in queue.list_jobs(status="pending")] == [live.id]
    with pytest.raises(InvalidArgument):
        queue.list_archived(offset=-1)
