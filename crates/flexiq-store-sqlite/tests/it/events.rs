//! The events stream on the file: the triggers cover the batched claim and completion writes
//! (one UPDATE for many rows, for one worker or several), a blocked reader in another process
//! is woken by its commit, a version 8 file with jobs gains the stream on migration, a
//! namespace switched off writes no row at all whatever the operation, the operator removals
//! report each job (an obliterate, its count), and ids are never reused once trimmed away.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use flexiq_core::events::{EventKind, QueueEvent};
use flexiq_core::store::{
    Ack, AckKind, AckRequest, Admin, ClaimFairRequest, ClaimRequest, DrainRequest, EnqueueRequest, Events,
    History, JobStore, ObliterateRequest, QueueControl, ReadEventsRequest, RemoveJobRequest, Schema,
    SetProgressRequest, TrimEventsRequest, UpsertStagesRequest, Workflows,
};
use flexiq_core::{ClaimedJob, EnqueueOptions, JobId, NewJob, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::two_process::{child_role, spawn_child};
use crate::{job_on, T0};

fn open(path: &Path, ns: &str) -> SqliteStore {
    SqliteStore::open(path, SqliteOptions { namespace: ns.into(), ..Default::default() }).unwrap()
}

async fn put(s: &SqliteStore, jobs: Vec<NewJob>) -> Vec<JobId> {
    let out = s.enqueue(EnqueueRequest { jobs, max_pending: None, now: T0 }).await.unwrap();
    out.into_iter().map(|e| e.id).collect()
}

async fn claim(s: &SqliteStore, queue: &str, limit: u32) -> Vec<ClaimedJob> {
    let req = ClaimRequest { queues: vec![queue.into()], limit, worker_id: "w".into(), now: T0 };
    s.claim(req).await.unwrap()
}

async fn complete(s: &SqliteStore, claimed: &[ClaimedJob]) {
    let acks = claimed
        .iter()
        .map(|c| Ack { job_id: c.job.id.clone(), fence: c.fence, kind: AckKind::Complete { result: None } })
        .collect();
    s.ack(AckRequest { acks, now: T0 + 1 }).await.unwrap();
}

async fn all(s: &SqliteStore) -> Vec<QueueEvent> {
    s.read_events(ReadEventsRequest { after: None, block_ms: 0, limit: 10_000 }).await.unwrap()
}

fn kinds_of(events: &[QueueEvent], id: &JobId) -> Vec<EventKind> {
    events.iter().filter(|e| e.job_id.as_deref() == Some(id.as_str())).map(|e| e.kind).collect()
}

fn rows_in(path: &Path, ns: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("SELECT COUNT(*) FROM events WHERE ns = ?1", [ns], |r| r.get(0)).unwrap()
}

#[tokio::test]
async fn batched_claims_and_completions_report_every_job_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir.path().join("batch.db"), "default");
    let ids = put(&s, (0..50).map(|_| job_on("bulk")).collect()).await;
    let claimed = claim(&s, "bulk", 50).await;
    assert_eq!(claimed.len(), 50, "one claim, one UPDATE over every row");
    for chunk in claimed.chunks(10) {
        complete(&s, chunk).await;
    }
    let events = all(&s).await;
    let count = |k: EventKind| events.iter().filter(|e| e.kind == k).count();
    assert_eq!(
        (count(EventKind::Enqueued), count(EventKind::Active), count(EventKind::Completed)),
        (50, 50, 50)
    );
    assert_eq!(events.len(), 150);
    for id in &ids {
        assert_eq!(kinds_of(&events, id), vec![EventKind::Enqueued, EventKind::Active, EventKind::Completed]);
    }
    for e in events.iter().filter(|e| e.kind == EventKind::Active) {
        assert_eq!((e.attempt, &e.data), (Some(1), &serde_json::json!({"worker_id": "w"})), "{e:?}");
    }
    let ids: Vec<i64> = events.iter().map(|e| e.id.parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids rise in read order");
    s.close().await.unwrap();
}

#[tokio::test]
async fn a_fair_claim_for_several_workers_names_each_jobs_worker() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir.path().join("fair.db"), "default");
    let jobs: Vec<NewJob> = (0..8)
        .map(|i| {
            let opts = EnqueueOptions {
                queue: Some("wf".into()),
                workflow_run_id: Some("run".into()),
                workflow_stage_id: Some(format!("s{i}")),
                ..Default::default()
            };
            NewJob::build("t", b"{}".to_vec(), opts, T0).unwrap()
        })
        .collect();
    s.upsert_stages(UpsertStagesRequest { jobs, now: T0 }).await.unwrap();
    let workers: Vec<String> = (0..8).map(|i| format!("w{i}")).collect();
    let req =
        ClaimFairRequest { queues: vec!["wf".into()], serves: vec![], workers, group_cap: None, now: T0 };
    let claimed = s.claim_fair(req).await.unwrap();
    assert_eq!(claimed.len(), 8);
    let events = all(&s).await;
    for c in &claimed {
        let active: Vec<&QueueEvent> = events
            .iter()
            .filter(|e| e.kind == EventKind::Active && e.job_id.as_deref() == Some(c.job.id.as_str()))
            .collect();
        assert_eq!(active.len(), 1, "{events:#?}");
        assert_eq!(active[0].data["worker_id"], serde_json::json!(c.job.worker_id), "{:?}", active[0]);
    }
    s.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_blocked_in_another_process_wakes_on_its_commit() {
    if let Some((_, s, out)) = child_role() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        s.enqueue(EnqueueRequest { jobs: vec![job_on("far")], max_pending: None, now: T0 }).await.unwrap();
        std::fs::write(out, wall_ms().to_string()).unwrap();
        s.close().await.unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wake.db");
    let out = dir.path().join("committed-at");
    let s = open(&db, "default");
    put(&s, vec![job_on("near")]).await;
    let tail = s.last_event_id().await.unwrap();
    let test = "events::a_reader_blocked_in_another_process_wakes_on_its_commit";
    let mut child = spawn_child(test, "enqueue", &db, &out);
    let started = Instant::now();
    let read = s.read_events(ReadEventsRequest { after: tail, block_ms: 30_000, limit: 10 }).await.unwrap();
    let woke_at = wall_ms();
    assert!(child.wait().unwrap().success());
    assert!(started.elapsed() < Duration::from_secs(20), "not woken by the other process");
    assert_eq!(read.len(), 1, "{read:#?}");
    assert_eq!((read[0].kind, read[0].queue.as_deref()), (EventKind::Enqueued, Some("far")));
    let committed_at: i64 = std::fs::read_to_string(&out).unwrap().parse().unwrap();
    // The child stamps its time after its commit returned, so the reader may even be first.
    let late = woke_at - committed_at;
    assert!(late < 1_000, "woken {late} ms after the other process committed");
    s.close().await.unwrap();
}

fn wall_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

#[tokio::test]
async fn a_reader_blocked_on_a_handle_wakes_on_a_commit_of_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir.path().join("near.db"), "default");
    let writer = s.clone();
    let started = Instant::now();
    let (read, _) = tokio::join!(
        s.read_events(ReadEventsRequest { after: None, block_ms: 20_000, limit: 10 }),
        async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            put(&writer, vec![job_on("q")]).await
        }
    );
    assert_eq!(read.unwrap().len(), 1);
    assert!(started.elapsed() < Duration::from_secs(5), "woke after {:?}", started.elapsed());
    s.close().await.unwrap();
}

/// Turns a current file back into a version 8 one: no events stream, the version row at 8.
fn downgrade_to_version_8(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    crate::drop_events_schema(&conn);
    conn.execute_batch("UPDATE schema_meta SET version = 8 WHERE id = 1").unwrap();
}

#[tokio::test]
async fn a_version_8_file_with_jobs_gains_the_stream_and_reports_from_then_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v8.db");
    let s = open(&path, "default");
    let ids = put(&s, (0..3).map(|_| job_on("old")).collect()).await;
    let running = claim(&s, "old", 1).await;
    s.close().await.unwrap();
    downgrade_to_version_8(&path);

    let no_ddl =
        SqliteStore::open(&path, SqliteOptions { auto_migrate: false, ..Default::default() }).unwrap();
    let err = no_ddl.last_event_id().await.unwrap_err();
    assert_eq!(err.code(), "CONFLICT", "a version 8 file asks for migrate(): {err}");
    assert_eq!(no_ddl.migrate().await.unwrap().applied, vec![9, 10]);
    assert_eq!(no_ddl.last_event_id().await.unwrap(), None, "nothing from before the upgrade");
    complete(&no_ddl, &running).await;
    let next = claim(&no_ddl, "old", 1).await;
    let events = all(&no_ddl).await;
    assert_eq!(kinds_of(&events, &running[0].job.id), vec![EventKind::Completed]);
    assert_eq!(kinds_of(&events, &next[0].job.id), vec![EventKind::Active]);
    assert_eq!(events.len(), 2);
    assert!(ids.contains(&next[0].job.id));
    no_ddl.close().await.unwrap();

    let s = open(&path, "default");
    assert!(s.migrate().await.unwrap().applied.is_empty());
    assert_eq!(all(&s).await.len(), 2);
    s.close().await.unwrap();
}

#[tokio::test]
async fn a_namespace_switched_off_writes_no_event_rows_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("off.db");
    let s = open(&path, "quiet");
    let loud = s.with_namespace("loud").unwrap();
    s.set_events_enabled(false).await.unwrap();
    for store in [&s, &loud] {
        let unique =
            EnqueueOptions { unique_key: Some("k".into()), queue: Some("q".into()), ..Default::default() };
        let keyed = NewJob::build("t", b"p".to_vec(), unique.clone(), T0).unwrap();
        let dup = NewJob::build("t", b"p".to_vec(), unique, T0).unwrap();
        put(store, vec![keyed, job_on("q"), job_on("q")]).await;
        put(store, vec![dup]).await;
        let claimed = claim(store, "q", 1).await;
        let progress =
            SetProgressRequest { id: claimed[0].job.id.clone(), fence: claimed[0].fence, progress: 5.0 };
        store.set_progress(progress).await.unwrap();
        complete(store, &claimed).await;
        store.pause("q").await.unwrap();
        store.resume("q").await.unwrap();
        let drained = DrainRequest { queue: "q".into(), include_delayed: true, now: T0 + 2 };
        assert_eq!(store.drain(drained).await.unwrap(), 2);
    }
    assert_eq!(rows_in(&path, "quiet"), 0);
    // enqueued x3, deduplicated, active, progress, completed, paused, resumed, removed x2
    assert_eq!(rows_in(&path, "loud"), 11);
    s.set_events_enabled(true).await.unwrap();
    put(&s, vec![job_on("q")]).await;
    assert_eq!(rows_in(&path, "quiet"), 1, "switched back on, it writes again");
    s.close().await.unwrap();
    loud.close().await.unwrap();
}

#[tokio::test]
async fn operator_removals_report_each_job_and_an_obliterate_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir.path().join("removals.db"), "default");
    let parent = put(&s, vec![job_on("r")]).await.remove(0);
    let opts = EnqueueOptions {
        queue: Some("r".into()),
        depends_on: vec![parent.to_string()],
        ..Default::default()
    };
    let child = put(&s, vec![NewJob::build("t", b"p".to_vec(), opts, T0).unwrap()]).await.remove(0);
    let req = RemoveJobRequest { job_id: child.clone(), remove_children: true, now: T0 + 5 };
    s.remove_job(req).await.unwrap();
    let events = all(&s).await;
    assert_eq!(kinds_of(&events, &child), vec![EventKind::Enqueued, EventKind::Removed]);
    assert_eq!(kinds_of(&events, &parent), vec![EventKind::Enqueued, EventKind::Removed], "a removed child");
    let removed = events.iter().find(|e| e.kind == EventKind::Removed).unwrap();
    assert_eq!(
        (removed.at_ms, removed.queue.as_deref(), removed.task.as_deref()),
        (T0 + 5, Some("r"), Some("t"))
    );

    let tail = s.last_event_id().await.unwrap();
    put(&s, (0..4).map(|_| job_on("gone")).collect()).await;
    let req = ObliterateRequest { queue: "gone".into(), force: false, count: 1_000, now: T0 + 9 };
    assert_eq!(s.obliterate(req).await.unwrap(), 0);
    let read = s.read_events(ReadEventsRequest { after: tail, block_ms: 0, limit: 100 }).await.unwrap();
    let last = read.last().unwrap();
    assert_eq!(read.len(), 5, "four enqueued, one removed: {read:#?}");
    assert_eq!(
        (last.kind, last.job_id.as_deref(), last.queue.as_deref()),
        (EventKind::Removed, None, Some("gone"))
    );
    assert_eq!(last.data, serde_json::json!({"count": 4}));
    s.close().await.unwrap();
}

#[tokio::test]
async fn ids_trimmed_away_are_never_handed_out_again() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&dir.path().join("trim.db"), "default");
    put(&s, (0..3).map(|_| job_on("q")).collect()).await;
    let newest: i64 = s.last_event_id().await.unwrap().unwrap().parse().unwrap();
    let trim = TrimEventsRequest { max_len: 0, max_age_ms: None, now: T0 };
    assert_eq!(s.trim_events(trim).await.unwrap(), 3);
    assert_eq!(s.last_event_id().await.unwrap(), None);
    put(&s, vec![job_on("q")]).await;
    let after: i64 = s.last_event_id().await.unwrap().unwrap().parse().unwrap();
    assert!(after > newest, "a reader holding {newest} still sees the new event {after}");
    let read = ReadEventsRequest { after: Some(newest.to_string()), block_ms: 0, limit: 10 };
    assert_eq!(s.read_events(read).await.unwrap().len(), 1);
    s.close().await.unwrap();
}
