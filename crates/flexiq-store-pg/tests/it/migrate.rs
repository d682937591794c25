//! Migrations: concurrent migrators, idempotence, restricted runtime roles, the contract floor.

use flexiq_core::store::{Ack, AckKind, AckRequest, Inspect, JobStore, ListJobsRequest, Schema};
use flexiq_core::{ErrorKind, CONTRACT_LEVEL};
use flexiq_store_pg::{PgOptions, PgStore};

use crate::common::{admin, claim, drop_schema, enqueue_n, fresh_schema, now_ms, open, url};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_concurrent_migrators_apply_exactly_once() {
    let schema = fresh_schema("mig");
    let runs: Vec<_> = (0..4)
        .map(|_| {
            let schema = schema.clone();
            tokio::spawn(async move { PgStore::migrate_schema(&url(), &schema).await })
        })
        .collect();
    let mut applied = Vec::new();
    for r in runs {
        applied.push(r.await.unwrap().unwrap().applied);
    }
    assert_eq!(applied.iter().filter(|a| !a.is_empty()).count(), 1, "{applied:?}");
    assert_eq!(applied.iter().find(|a| !a.is_empty()).unwrap(), &crate::upgrade::versions_from(1));
    // Idempotent afterwards, through both entry points.
    assert!(PgStore::migrate_schema(&url(), &schema).await.unwrap().applied.is_empty());
    let s = open(&schema, 1).await;
    let summary = s.migrate().await.unwrap();
    assert!(summary.applied.is_empty() && !summary.schemaless);
    drop_schema(&schema).await;
}

#[tokio::test]
async fn runtime_role_without_create_runs_on_a_premigrated_schema() {
    let schema = fresh_schema("role");
    let role = format!("fq_role_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let a = admin().await;
    a.batch_execute(&format!("CREATE ROLE {role} LOGIN")).await.unwrap();
    let role_url = format!("postgres://{role}@127.0.0.1:5432/test");
    let outcome = async {
        let can_create: bool = a
            .query_one("SELECT has_database_privilege($1, current_database(), 'CREATE')", &[&role])
            .await
            .unwrap()
            .get(0);
        assert!(!can_create, "the test role must lack CREATE");
        let opts = |auto| PgOptions {
            schema: schema.clone(),
            auto_migrate: auto,
            pool_size: 2,
            ..Default::default()
        };
        // Not migrated yet: a clear conflict without auto_migrate, a permission error with it.
        let err = PgStore::connect(&role_url, opts(false)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
        assert!(err.to_string().contains(&schema));
        let err = PgStore::connect(&role_url, opts(true)).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Backend, "{err}");
        // The owner migrates and grants DML only.
        assert_eq!(
            PgStore::migrate_schema(&url(), &schema).await.unwrap().applied,
            crate::upgrade::versions_from(1)
        );
        a.batch_execute(&format!(
            "GRANT USAGE ON SCHEMA \"{schema}\" TO {role}; \
             GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \"{schema}\" TO {role};"
        ))
        .await
        .unwrap();
        for auto in [false, true] {
            let s = PgStore::connect(&role_url, opts(auto)).await.unwrap();
            assert!(s.migrate().await.unwrap().applied.is_empty());
            let now = now_ms();
            enqueue_n(&s, "q", 3, now).await;
            let got = claim(&s, "q", 10, "w", now).await.unwrap();
            assert_eq!(got.len(), 3);
            let acks = got
                .iter()
                .map(|c| Ack {
                    job_id: c.job.id.clone(),
                    fence: c.fence,
                    kind: AckKind::Complete { result: None },
                })
                .collect();
            assert_eq!(s.ack(AckRequest { acks, now }).await.unwrap().len(), 3);
            flexiq_core::Store::close(&s).await.unwrap();
        }
    }
    .await;
    drop_schema(&schema).await;
    a.batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role}")).await.unwrap();
    outcome
}

#[tokio::test]
async fn floor_above_this_build_refuses_to_open() {
    let schema = fresh_schema("floor");
    let s = open(&schema, 1).await;
    assert_eq!(s.min_contract().await.unwrap(), 1);
    assert_eq!(s.set_min_contract(CONTRACT_LEVEL + 1).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    admin()
        .await
        .execute(
            &format!("UPDATE \"{schema}\".meta SET value = $1 WHERE key = 'contract_floor'"),
            &[&i64::from(CONTRACT_LEVEL + 1)],
        )
        .await
        .unwrap();
    let opts = PgOptions { schema: schema.clone(), ..Default::default() };
    let err = PgStore::connect(&url(), opts).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ContractTooOld, "{err}");
    drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_one_schema_upgrades_and_keeps_its_jobs() {
    let schema = fresh_schema("migup");
    let a = admin().await;
    let v1 = include_str!("../../src/migrations/0001_init.sql").replace("{S}", &format!("\"{schema}\""));
    a.batch_execute(&format!(
        "CREATE SCHEMA \"{schema}\"; {v1}; \
         CREATE TABLE \"{schema}\".schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL); \
         INSERT INTO \"{schema}\".schema_migrations VALUES (1, 0)"
    ))
    .await
    .unwrap();
    let index = format!("\"{schema}\".jobs_created");
    let has_index = "SELECT to_regclass($1) IS NOT NULL";
    assert!(a.query_one(has_index, &[&index]).await.unwrap().get::<_, bool>(0));
    assert_eq!(
        PgStore::migrate_schema(&url(), &schema).await.unwrap().applied,
        crate::upgrade::versions_from(2)
    );
    assert!(
        !a.query_one(has_index, &[&index]).await.unwrap().get::<_, bool>(0),
        "version 2 drops the all-status listing index"
    );
    assert!(PgStore::migrate_schema(&url(), &schema).await.unwrap().applied.is_empty());
    let s = open(&schema, 2).await;
    enqueue_n(&s, "q", 3, now_ms()).await;
    let all = ListJobsRequest { filter: Default::default(), limit: 10, offset: 0 };
    assert_eq!(s.list_jobs(all).await.unwrap().len(), 3);
    drop_schema(&schema).await;
}
