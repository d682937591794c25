//! Upgrades from earlier schema versions keep their data: a schema is built at an old version
//! from the embedded migration files, filled by hand, then migrated by this build.

use flexiq_core::store::{
    Ack, AckKind, AckRequest, EnqueueRequest, Inspect, JobStore, ListArchivedRequest, UpsertStagesRequest,
    Workflows,
};
use flexiq_core::{AckOutcome, EnqueueOptions, ErrorKind, JobId, JobStatus, NewJob};
use flexiq_store_pg::PgStore;

use crate::common::{admin, drop_schema, fresh_schema, now_ms, open, url};

/// Every migration file, in order, as (version, SQL with `{S}` for the schema).
const FILES: &[(u32, &str)] = &[
    (1, include_str!("../../src/migrations/0001_init.sql")),
    (2, include_str!("../../src/migrations/0002_fewer_job_indexes.sql")),
    (3, include_str!("../../src/migrations/0003_no_due_index.sql")),
    (4, include_str!("../../src/migrations/0004_claim_seq.sql")),
    (5, include_str!("../../src/migrations/0005_job_counts.sql")),
    (6, include_str!("../../src/migrations/0006_workflow_stages.sql")),
    (7, include_str!("../../src/migrations/0007_dead_letter_stages.sql")),
    (8, include_str!("../../src/migrations/0008_admin_indexes.sql")),
    (9, include_str!("../../src/migrations/0009_stall_count.sql")),
    (10, include_str!("../../src/migrations/0010_flows_dedup.sql")),
    (11, include_str!("../../src/migrations/0011_job_schedulers.sql")),
    (12, include_str!("../../src/migrations/0012_events.sql")),
    (13, include_str!("../../src/migrations/0013_start_seq.sql")),
];

/// The last version whose file is plain SQL: later files hold parts the store generates.
const LAST_PLAIN: u32 = 11;

/// The versions a migration from just before `first` applies, up to this build's latest.
pub(crate) fn versions_from(first: u32) -> Vec<u32> {
    FILES.iter().map(|f| f.0).filter(|v| *v >= first).collect()
}

/// Creates `schema` at `version` by running the migration files up to it, as that build did.
pub(crate) async fn schema_at(schema: &str, version: u32) {
    assert!(version <= LAST_PLAIN, "version {version} cannot be built from its files alone");
    let quoted = format!("\"{schema}\"");
    let mut sql = format!(
        "CREATE SCHEMA {quoted}; \
         CREATE TABLE {quoted}.schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL);"
    );
    for (v, file) in FILES.iter().filter(|f| f.0 <= version) {
        sql.push_str(&file.replace("{S}", &quoted));
        sql.push_str(&format!(";\nINSERT INTO {quoted}.schema_migrations VALUES ({v}, 0);\n"));
    }
    admin().await.batch_execute(&sql).await.expect("build the old schema");
}

#[tokio::test]
async fn upgrading_from_version_3_keeps_running_and_archived_jobs() {
    let schema = fresh_schema("up4");
    schema_at(&schema, 3).await;
    let a = admin().await;
    let (running, archived) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
    let started = now_ms() - 1_000;
    let insert = |table: &str, extra: &str| {
        format!(
            "INSERT INTO \"{schema}\".{table} (id, namespace, queue, task, payload, priority, status, attempt, \
               max_retries, backoff_base_ms, backoff_max_ms, created_at, run_at, started_at, worker_id{extra}) \
             VALUES ($1, 'default', 'q', 't', '\\x7b7d', 0, $2, $3, 5, 1000, 60000, $4, $4, $4, 'w'{})",
            if extra.is_empty() { "" } else { ", $4" }
        )
    };
    a.execute(&insert("jobs", ""), &[&running, &1i16, &2i32, &started]).await.unwrap();
    let sql = insert("archived_jobs", ", finished_at, archived_at");
    a.execute(&sql.replace(", $4)", ", $4, $4)"), &[&archived, &2i16, &3i32, &started]).await.unwrap();

    assert_eq!(PgStore::migrate_schema(&url(), &schema).await.unwrap().applied, versions_from(4));
    let s = open(&schema, 2).await;
    let id = JobId::from_trusted(running.hyphenated().to_string());
    let j = s.get(&id).await.unwrap().expect("the running job survives the upgrade");
    assert_eq!((j.status, j.attempt, j.claim_seq), (JobStatus::Running, 2, 2), "claim_seq starts at attempt");
    assert_eq!(s.stats(None).await.unwrap().running, 1, "migration 5 counted the job already there");
    let fence = j.fence().expect("a running job has a fence");
    assert_eq!((fence.attempt, fence.started_at, fence.claim_seq), (2, started, 2));
    let done = Ack { job_id: id.clone(), fence, kind: AckKind::Complete { result: None } };
    assert_eq!(
        s.ack(AckRequest { acks: vec![done], now: now_ms() }).await.unwrap(),
        vec![AckOutcome::Acknowledged]
    );
    assert_eq!(s.get(&id).await.unwrap().unwrap().status, JobStatus::Completed);
    let st = s.stats(None).await.unwrap();
    assert_eq!((st.running, st.completed), (0, 1), "the ack moved the count");
    let old = s.list_archived(ListArchivedRequest { limit: 10, offset: 0 }).await.unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!((old[0].attempt, old[0].claim_seq), (3, 3));
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn upgrading_from_version_5_keeps_one_row_per_stage_and_archives_the_rest() {
    let schema = fresh_schema("up6");
    schema_at(&schema, 5).await;
    let a = admin().await;
    let (old, newer, other) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
    let t = now_ms() - 10_000;
    let insert = format!(
        "INSERT INTO \"{schema}\".jobs (id, namespace, queue, task, payload, priority, status, attempt, \
           max_retries, backoff_base_ms, backoff_max_ms, created_at, run_at, started_at, finished_at, worker_id, \
           claim_seq, workflow_run_id, workflow_stage_id) \
         VALUES ($1, 'default', 'workflow', 'wf', '\\x7b7d', 0, $2, $3::int4, 2, 1000, 60000, $4, $4, $5, $6, $7, $3::int4::int8, 'run', $8)"
    );
    let none: Option<i64> = None;
    // Two builds ago a pair could hold two rows: a finished one and its newer re-enqueue.
    a.execute(&insert, &[&old, &2i16, &1i32, &t, &Some(t), &Some(t + 1), &Some("w"), &"s1"]).await.unwrap();
    a.execute(&insert, &[&newer, &1i16, &1i32, &(t + 5), &Some(t + 5), &none, &Some("w"), &"s1"])
        .await
        .unwrap();
    a.execute(&insert, &[&other, &0i16, &0i32, &(t + 6), &none, &none, &None::<&str>, &"s2"]).await.unwrap();

    assert_eq!(PgStore::migrate_schema(&url(), &schema).await.unwrap().applied, versions_from(6));
    let s = open(&schema, 2).await;
    let jid = |u: uuid::Uuid| JobId::from_trusted(u.hyphenated().to_string());
    let listed: Vec<JobId> = s.jobs_of_run("run").await.unwrap().into_iter().map(|j| j.id).collect();
    assert_eq!(listed, vec![jid(newer), jid(other)], "the newest row of each stage stays live");
    let archived = s.list_archived(ListArchivedRequest { limit: 10, offset: 0 }).await.unwrap();
    assert_eq!(archived.len(), 1);
    assert_eq!((archived[0].id.clone(), archived[0].status), (jid(old), JobStatus::Completed));
    assert_eq!(archived[0].workflow_stage_id.as_deref(), Some("s1"));
    let st = s.stats(None).await.unwrap();
    assert_eq!((st.pending, st.running, st.completed), (1, 1, 0), "the counts follow the archived row");

    // The running attempt from before the upgrade still acks.
    let running = s.get(&jid(newer)).await.unwrap().unwrap();
    assert_eq!(running.workflow_version, None);
    let fence = running.fence().expect("a running job has a fence");
    let done = Ack { job_id: jid(newer), fence, kind: AckKind::Complete { result: None } };
    let acked = s.ack(AckRequest { acks: vec![done], now: now_ms() }).await.unwrap();
    assert_eq!(acked, vec![AckOutcome::Acknowledged]);

    // The pair is now held to one row: enqueue refuses it, upsert replaces it in place.
    let stage = |version: &str| {
        let opts = EnqueueOptions {
            queue: Some("workflow".into()),
            workflow_run_id: Some("run".into()),
            workflow_stage_id: Some("s1".into()),
            workflow_version: Some(version.into()),
            ..Default::default()
        };
        NewJob::build("wf", b"{}".to_vec(), opts, now_ms()).unwrap()
    };
    let err = s.enqueue(EnqueueRequest { jobs: vec![stage("v2")], max_pending: None, now: now_ms() }).await;
    let err = err.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.to_string().contains(&jid(newer).to_string()), "{err}");
    let ids = s.upsert_stages(UpsertStagesRequest { jobs: vec![stage("v2")], now: now_ms() }).await.unwrap();
    assert_eq!(ids, vec![jid(newer)]);
    let j = s.get(&jid(newer)).await.unwrap().unwrap();
    assert_eq!((j.status, j.attempt, j.claim_seq), (JobStatus::Pending, 0, 1));
    assert_eq!(j.workflow_version.as_deref(), Some("v2"));
    let st = s.stats(None).await.unwrap();
    assert_eq!((st.pending, st.completed), (2, 0));
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn upgrading_from_version_6_lets_a_dead_stage_be_revived_in_place() {
    use flexiq_core::store::{DeadLetters, RetryDeadRequest};

    let schema = fresh_schema("up7");
    schema_at(&schema, 6).await;
    let a = admin().await;
    let (stage, plain, entry, plain_entry) =
        (uuid::Uuid::now_v7(), uuid::Uuid::now_v7(), uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
    let t = now_ms() - 10_000;
    // What a version-6 build left: a dead stage and a dead plain job, each with its entry,
    // the entries without workflow fields.
    let job = format!(
        "INSERT INTO \"{schema}\".jobs (id, namespace, queue, task, payload, priority, status, attempt, \
           max_retries, backoff_base_ms, backoff_max_ms, created_at, run_at, started_at, finished_at, last_error, \
           claim_seq, group_key, workflow_run_id, workflow_stage_id, workflow_version) \
         VALUES ($1, 'default', 'workflow', 'wf', '\\x7b7d', 0, 4, 1, 0, 1000, 60000, $2, $2, $2, $2, 'boom', 1, \
           'tenant-1', $3, $4, $5)"
    );
    let (none, no_version): (Option<&str>, Option<&str>) = (None, None);
    a.execute(&job, &[&stage, &t, &Some("run"), &Some("s1"), &Some("v3")]).await.unwrap();
    a.execute(&job, &[&plain, &t, &none, &none, &no_version]).await.unwrap();
    let dead = format!(
        "INSERT INTO \"{schema}\".dead_letters (id, namespace, original_job_id, queue, task_name, payload, error, \
           retry_count, failed_at, metadata, priority, max_retries, backoff_base_ms, backoff_max_ms, timeout_ms, group_key) \
         VALUES ($1, 'default', $2, 'workflow', 'wf', '\\x7b7d', 'boom', 1, $3, NULL, 0, 0, 1000, 60000, NULL, 'tenant-1')"
    );
    a.execute(&dead, &[&entry, &stage, &t]).await.unwrap();
    a.execute(&dead, &[&plain_entry, &plain, &t]).await.unwrap();

    assert_eq!(PgStore::migrate_schema(&url(), &schema).await.unwrap().applied, versions_from(7));
    let s = open(&schema, 2).await;
    let jid = |u: uuid::Uuid| JobId::from_trusted(u.hyphenated().to_string());
    let now = now_ms();
    let revived =
        s.retry_dead(RetryDeadRequest { dead_id: entry.hyphenated().to_string(), now }).await.unwrap();
    assert_eq!(revived, jid(stage), "the migrated entry knows its stage, so the stage's own row comes back");
    let j = s.get(&revived).await.unwrap().unwrap();
    assert_eq!((j.status, j.attempt, j.claim_seq, j.run_at), (JobStatus::Pending, 0, 1, now));
    assert_eq!((j.workflow_run_id.as_deref(), j.workflow_stage_id.as_deref()), (Some("run"), Some("s1")));
    assert_eq!((j.workflow_version.as_deref(), j.group_key.as_deref()), (Some("v3"), Some("tenant-1")));
    assert_eq!((j.last_error, j.worker_id), (None, None));
    assert_eq!(s.jobs_of_run("run").await.unwrap().len(), 1, "one row per (run, stage)");
    let fresh =
        s.retry_dead(RetryDeadRequest { dead_id: plain_entry.hyphenated().to_string(), now }).await.unwrap();
    assert_ne!(fresh, jid(plain), "a plain job is enqueued again as a new job");
    assert_eq!(s.get(&jid(plain)).await.unwrap().unwrap().status, JobStatus::Dead);
    let st = s.stats(None).await.unwrap();
    assert_eq!((st.pending, st.dead), (2, 1), "the counts follow the revived row");
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn upgrading_from_version_8_counts_stalls_from_zero_against_the_default_budget() {
    use flexiq_core::store::{QueueConfig, QueueControl, ReleaseStaleRequest, SetMaxStalledRequest};
    use flexiq_core::transition::{LEASE_HEARTBEAT_LOST, STALLED};

    let schema = fresh_schema("up9");
    schema_at(&schema, 8).await;
    let a = admin().await;
    let (running, archived) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
    let t = now_ms() - 10_000;
    // What a version-8 build left: a running job whose worker went away, an archived job, and
    // the queue's controls row with a concurrency cap.
    let cols =
        "id, namespace, queue, task, payload, priority, status, attempt, max_retries, backoff_base_ms, \
        backoff_max_ms, created_at, run_at, started_at, heartbeat_at, worker_id, claim_seq";
    let vals = "$1, 'default', 'q', 't', '\\x7b7d', 0, $2, 1, 3, 1000, 60000, $3, $3, $3, $3, 'w', 1";
    a.execute(&format!("INSERT INTO \"{schema}\".jobs ({cols}) VALUES ({vals})"), &[&running, &1i16, &t])
        .await
        .unwrap();
    let sql = format!(
        "INSERT INTO \"{schema}\".archived_jobs ({cols}, finished_at, archived_at) VALUES ({vals}, $3, $3)"
    );
    a.execute(&sql, &[&archived, &2i16, &t]).await.unwrap();
    a.execute(
        &format!(
            "INSERT INTO \"{schema}\".queues (namespace, queue, concurrency) VALUES ('default', 'q', 4)"
        ),
        &[],
    )
    .await
    .unwrap();

    assert_eq!(PgStore::migrate_schema(&url(), &schema).await.unwrap().applied, versions_from(9));
    let s = open(&schema, 2).await;
    let id = JobId::from_trusted(running.hyphenated().to_string());
    let j = s.get(&id).await.unwrap().expect("the running job survives the upgrade");
    assert_eq!(
        (j.status, j.attempt, j.stall_count),
        (JobStatus::Running, 1, 0),
        "existing rows never stalled"
    );
    let old = s.list_archived(ListArchivedRequest { limit: 10, offset: 0 }).await.unwrap();
    assert_eq!((old.len(), old[0].stall_count), (1, 0));
    let config = s.queue_config("q").await.unwrap();
    assert_eq!(
        config,
        QueueConfig { concurrency: Some(4), ..QueueConfig::default() },
        "no budget of its own"
    );

    // A job running across the upgrade reported no start (rows before version 13 read 0), so
    // its release spends nothing. Then the default budget of 1: the first stall of a started
    // attempt gives the attempt back, the second fails it.
    let stall = |now| ReleaseStaleRequest { stale_after_ms: 1_000, now };
    assert_eq!(s.release_stale(stall(now_ms())).await.unwrap(), vec![id.clone()]);
    let j = s.get(&id).await.unwrap().unwrap();
    assert_eq!((j.status, j.attempt, j.stall_count), (JobStatus::Pending, 0, 0));
    assert!(j.last_error.unwrap_or_default().starts_with(LEASE_HEARTBEAT_LOST));
    let mut now = now_ms();
    for expected in [(JobStatus::Pending, 1), (JobStatus::Dead, 2)] {
        now += 3_000;
        let claimed = crate::common::claim(&s, "q", 1, "w2", now).await.unwrap();
        assert_eq!(claimed.len(), 1);
        flexiq_conformance::fixtures::report_started(&s, &claimed[0], now).await;
        assert_eq!(s.release_stale(stall(now + 2_000)).await.unwrap(), vec![id.clone()]);
        let j = s.get(&id).await.unwrap().unwrap();
        assert_eq!((j.status, j.stall_count), expected);
    }
    let j = s.get(&id).await.unwrap().unwrap();
    assert!(j.last_error.unwrap_or_default().starts_with(STALLED));

    // The migrated controls row takes a budget beside its cap, and clearing it keeps the cap.
    s.set_max_stalled(SetMaxStalledRequest { queue: "q".into(), max: Some(5) }).await.unwrap();
    assert_eq!(s.queue_config("q").await.unwrap().stall_budget(), 5);
    s.set_max_stalled(SetMaxStalledRequest { queue: "q".into(), max: None }).await.unwrap();
    assert_eq!(s.queue_config("q").await.unwrap(), config);
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn upgrading_from_version_9_keeps_plain_edges_that_cancel_their_dependent() {
    use flexiq_core::flow::EdgePolicy;
    use flexiq_core::store::{CancelRequest, DependenciesRequest, Flows};

    let schema = fresh_schema("up10");
    schema_at(&schema, 9).await;
    let a = admin().await;
    let (dep, dependent) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
    let t = now_ms() - 10_000;
    // What a version-9 build left: a pending job and a job waiting on it, with their edge.
    let job = format!(
        "INSERT INTO \"{schema}\".jobs (id, namespace, queue, task, payload, priority, status, attempt, \
           max_retries, backoff_base_ms, backoff_max_ms, created_at, run_at, depends_on, has_dependents) \
         VALUES ($1, 'default', 'q', 't', '\\x7b7d', 0, $2, 0, 0, 1000, 60000, $3, $3, $4, $5)"
    );
    a.execute(&job, &[&dep, &0i16, &t, &Vec::<uuid::Uuid>::new(), &true]).await.unwrap();
    a.execute(&job, &[&dependent, &7i16, &t, &vec![dep], &false]).await.unwrap();
    let edge = format!(
        "INSERT INTO \"{schema}\".job_deps (depends_on, job_id, namespace) VALUES ($1, $2, 'default')"
    );
    a.execute(&edge, &[&dep, &dependent]).await.unwrap();

    assert_eq!(PgStore::migrate_schema(&url(), &schema).await.unwrap().applied, versions_from(10));
    let policy: i16 =
        a.query_one(&format!("SELECT policy FROM \"{schema}\".job_deps"), &[]).await.unwrap().get(0);
    assert_eq!(policy, 0, "an edge from before flows is a plain depends_on edge");
    let s = open(&schema, 2).await;
    let jid = |u: uuid::Uuid| JobId::from_trusted(u.hyphenated().to_string());
    let deps = s
        .get_dependencies(DependenciesRequest { job_id: jid(dependent), after: None, limit: 10 })
        .await
        .unwrap();
    assert_eq!(deps.unprocessed.len(), 1);
    assert_eq!(
        (deps.unprocessed[0].id.clone(), deps.unprocessed[0].policy),
        (jid(dep), EdgePolicy::CancelDependent)
    );

    // Its dependency cancelled, the dependent is cancelled as it always was.
    assert!(s.cancel(CancelRequest { id: jid(dep), now: now_ms() }).await.unwrap());
    let j = s.get(&jid(dependent)).await.unwrap().unwrap();
    assert_eq!(j.status, JobStatus::Cancelled);
    assert!(j.last_error.unwrap_or_default().contains(&jid(dep).to_string()));
    let st = s.stats(None).await.unwrap();
    assert_eq!((st.waiting, st.cancelled), (0, 2), "the counts follow both rows");
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn upgrading_from_version_10_adds_schedulers_that_fire_beside_existing_jobs() {
    use flexiq_core::schedule::{CatchUp, JobTemplate, Repeat, RepeatRule};
    use flexiq_core::store::{FireSchedulersRequest, Schedulers, UpsertSchedulerRequest};

    let schema = fresh_schema("up11");
    schema_at(&schema, 10).await;
    let a = admin().await;
    let old = uuid::Uuid::now_v7();
    let t = now_ms() - 10_000;
    // What a version-10 build left: a pending job holding a unique key.
    let job = format!(
        "INSERT INTO \"{schema}\".jobs (id, namespace, queue, task, payload, priority, status, attempt, \
           max_retries, backoff_base_ms, backoff_max_ms, created_at, run_at, unique_key) \
         VALUES ($1, 'default', 'cron', 'tick', '\\x7b7d', 0, 0, 0, 0, 1000, 60000, $2, $2, 'before')"
    );
    a.execute(&job, &[&old, &t]).await.unwrap();

    assert_eq!(PgStore::migrate_schema(&url(), &schema).await.unwrap().applied, versions_from(11));
    let s = open(&schema, 2).await;
    assert_eq!(s.count_job_schedulers().await.unwrap(), 0, "no scheduler before the upgrade");
    let rule = RepeatRule {
        repeat: Repeat::Every { every_ms: 1_000 },
        limit: None,
        start_at_ms: None,
        end_at_ms: None,
        immediately: true,
        catch_up: CatchUp::Latest,
    };
    let options = EnqueueOptions { queue: Some("cron".into()), ..Default::default() };
    let template = JobTemplate { task: "tick".into(), payload: b"{}".to_vec(), options };
    let req = UpsertSchedulerRequest { id: "beat".into(), rule, template, now: t };
    assert_eq!(s.upsert_job_scheduler(req).await.unwrap().next_run_ms, Some(t));
    let fired = s.fire_due_schedulers(FireSchedulersRequest { limit: 10, now: t }).await.unwrap();
    assert_eq!(fired.len(), 1);
    let j = s.get(&fired[0].job_id).await.unwrap().unwrap();
    assert_eq!((j.run_at, j.unique_key), (t, Some(format!("scheduler:beat:{t}"))));
    assert_eq!(s.stats(Some("cron")).await.unwrap().pending, 2, "the old job and the fired one");
    let old = JobId::from_trusted(old.hyphenated().to_string());
    assert_eq!(s.get(&old).await.unwrap().unwrap().unique_key.as_deref(), Some("before"));
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}
