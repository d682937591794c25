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
}
