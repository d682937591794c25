//! Helpers: a fresh schema per test, dropped afterwards; an admin connection; job builders.

use flexiq_core::store::{Ack, AckKind, ClaimRequest, EnqueueRequest, JobStore};
use flexiq_core::{ClaimedJob, EnqueueOptions, NewJob, Result};
use flexiq_store_pg::{PgOptions, PgStore};

pub(crate) fn url() -> String {
    std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

pub(crate) async fn admin() -> tokio_postgres::Client {
    let (c, conn) =
        tokio_postgres::connect(&url(), tokio_postgres::NoTls).await.expect("connect to postgres");
    tokio::spawn(conn);
    c
}

/// A schema name no other test uses.
pub(crate) fn fresh_schema(tag: &str) -> String {
    format!("fq_{tag}_{}", uuid::Uuid::new_v4().simple())
}

pub(crate) async fn drop_schema(schema: &str) {
    admin()
        .await
        .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
        .await
        .expect("drop schema");
}

pub(crate) async fn open(schema: &str, pool_size: usize) -> PgStore {
    let opts = PgOptions { schema: schema.to_string(), pool_size, ..Default::default() };
    PgStore::connect(&url(), opts).await.expect("connect store")
}

pub(crate) fn job_on(queue: &str, now: i64) -> NewJob {
    let opts =
        EnqueueOptions { queue: Some(queue.to_string()), max_retries: Some(1_000), ..Default::default() };
    NewJob::build("t", b"{}".to_vec(), opts, now).unwrap()
}

pub(crate) async fn enqueue_n(s: &PgStore, queue: &str, n: usize, now: i64) {
    let mut left = n;
    while left > 0 {
        let k = left.min(5_000);
        let jobs = (0..k).map(|_| job_on(queue, now)).collect();
        s.enqueue(EnqueueRequest { jobs, max_pending: None, now }).await.expect("enqueue");
        left -= k;
    }
}

pub(crate) async fn claim(
    s: &PgStore,
    queue: &str,
    limit: u32,
    worker: &str,
    now: i64,
) -> Result<Vec<ClaimedJob>> {
    s.claim(ClaimRequest { queues: vec![queue.to_string()], limit, worker_id: worker.to_string(), now }).await
}

pub(crate) fn completes(jobs: &[ClaimedJob]) -> Vec<Ack> {
    jobs.iter()
        .map(|c| Ack { job_id: c.job.id.clone(), fence: c.fence, kind: AckKind::Complete { result: None } })
        .collect()
}

/// `(completed jobs, jobs, success metric rows, jobs with more than one success row)`.
pub(crate) async fn tally(schema: &str) -> (i64, i64, i64, i64) {
    let c = admin().await;
    let r = c
        .query_one(
            &format!(
                "SELECT (SELECT count(*) FROM \"{schema}\".jobs WHERE status = 2), \
                        (SELECT count(*) FROM \"{schema}\".jobs), \
                        (SELECT count(*) FROM \"{schema}\".task_metrics WHERE success), \
                        (SELECT count(*) FROM (SELECT job_id FROM \"{schema}\".task_metrics WHERE success \
                           GROUP BY job_id HAVING count(*) > 1) d)"
            ),
            &[],
        )
        .await
        .unwrap();
    (r.get(0), r.get(1), r.get(2), r.get(3))
}
