//! Upgrades from earlier schema versions keep their data: a schema is built at an old version
//! from the embedded migration files, filled by hand, then migrated by this build.

use flexiq_core::store::{Ack, AckKind, AckRequest, Inspect, JobStore, ListArchivedRequest};
use flexiq_core::{AckOutcome, JobId, JobStatus};
use flexiq_store_pg::PgStore;

use crate::common::{admin, drop_schema, fresh_schema, now_ms, open, url};

/// Every migration file, in order, as (version, SQL with `{S}` for the schema).
const FILES: &[(u32, &str)] = &[
    (1, include_str!("../../src/migrations/0001_init.sql")),
    (2, include_str!("../../src/migrations/0002_fewer_job_indexes.sql")),
    (3, include_str!("../../src/migrations/0003_no_due_index.sql")),
    (4, include_str!("../../src/migrations/0004_claim_seq.sql")),
    (5, include_str!("../../src/migrations/0005_job_counts.sql")),
];

/// The versions a migration from just before `first` applies, up to this build's latest.
pub(crate) fn versions_from(first: u32) -> Vec<u32> {
    FILES.iter().map(|f| f.0).filter(|v| *v >= first).collect()
}

/// Creates `schema` at `version` by running the migration files up to it, as that build did.
pub(crate) async fn schema_at(schema: &str, version: u32) {
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
