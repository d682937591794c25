use std::time::{Duration, Instant};
use flexiq_core::store::{Ack, AckKind, ClaimRequest, EnqueueRequest, JobStore};
use flexiq_core::{EnqueueOptions, NewJob};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};
const T0: i64 = 1_700_000_000_000;
#[tokio::main(flavor = "current_thread")]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open(dir.path().join("p.db"), SqliteOptions::default()).unwrap();
    let opts = EnqueueOptions { queue: Some("cc".into()), ..Default::default() };
    for _ in 0..5 {
        let jobs: Vec<_> = (0..10_000).map(|_| NewJob::build("b", b"x".to_vec(), opts.clone(), T0).unwrap()).collect();
        let t = Instant::now();
        s.enqueue(EnqueueRequest { jobs, max_pending: None, now: T0 }).await.unwrap();
        println!("enqueue_many 10k {:?}", t.elapsed());
    }
    let (mut tc, mut ta) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..200 {
        let t = Instant::now();
        let c = s.claim(ClaimRequest { queues: vec!["cc".into()], limit: 100, worker_id: "w".into(), now: T0 }).await.unwrap();
        tc += t.elapsed();
        let acks = c.into_iter().map(|c| Ack { job_id: c.job.id, fence: c.fence, kind: AckKind::Complete { result: None } }).collect();
        let t = Instant::now();
        s.ack(acks, T0 + 1).await.unwrap();
        ta += t.elapsed();
    }
    println!("claim {:?} ack {:?} per batch", tc / 200, ta / 200);
    let c = s.claim(ClaimRequest { queues: vec!["cc".into()], limit: 100, worker_id: "w".into(), now: T0 }).await.unwrap();
    let conn = rusqlite::Connection::open(s.path()).unwrap();
    let ids: Vec<String> = c.iter().map(|c| c.job.id.to_string()).collect();
    for (name, sql) in [
        ("select", "SELECT status FROM jobs WHERE id = ?1 AND ns = 'default'"),
        ("plain update", "UPDATE jobs SET heartbeat_at = 5 WHERE id = ?1"),
        ("finish update", "UPDATE jobs SET status = 2, finished_at = 7 WHERE id = ?1"),
    ] {
        let t = Instant::now();
        for id in &ids {
            let mut st = conn.prepare_cached(sql).unwrap();
            let _ = st.execute([id]).or_else(|_| st.query_row([id], |_| Ok(0)));
        }
        let plan: Vec<String> = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap().query_map([&ids[0]], |r| r.get(3)).unwrap().map(|r| r.unwrap()).collect();
        println!("{name}: {:?} for 100, plan {plan:?}", t.elapsed());
    }
}
