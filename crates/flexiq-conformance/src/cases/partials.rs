//! Partial results: gapless sequence numbers per job, read back in order.

use flexiq_core::store::{PartialsRequest, PublishPartialRequest};
use flexiq_core::{ErrorKind, JobId};

use crate::fixtures::{assert_kind, at, job, now, open, start};
use crate::Harness;

/// A thousand partials published in a tight loop come back in order with seq 1..=1000.
pub async fn partials_thousand_in_order_gapless(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    for i in 0..1_000u64 {
        let seq = s
            .publish_partial(PublishPartialRequest {
                id: c.job.id.clone(),
                data: i.to_string().into_bytes(),
                now: at(i as i64),
            })
            .await
            .unwrap();
        assert_eq!(seq, i + 1);
    }
    let mut all = Vec::new();
    let mut after = 0;
    loop {
        let page =
            s.partials(PartialsRequest { id: c.job.id.clone(), after_seq: after, limit: 300 }).await.unwrap();
        assert!(page.len() <= 300);
        let Some(last) = page.last() else { break };
        after = last.seq;
        all.extend(page);
    }
    assert_eq!(all.len(), 1_000);
    for (i, p) in all.iter().enumerate() {
        assert_eq!(p.seq, i as u64 + 1);
        assert_eq!(p.data, i.to_string().into_bytes());
        assert_eq!(p.published_at, at(i as i64));
    }
}

/// `after_seq` skips what was already read.
pub async fn partials_after_seq(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    for i in 0..5u8 {
        s.publish_partial(PublishPartialRequest { id: c.job.id.clone(), data: vec![i], now: now() })
            .await
            .unwrap();
    }
    let rest = s.partials(PartialsRequest { id: c.job.id.clone(), after_seq: 3, limit: 100 }).await.unwrap();
    assert_eq!(rest.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![4, 5]);
    assert_eq!(rest[0].data, vec![3]);
    assert!(s
        .partials(PartialsRequest { id: c.job.id.clone(), after_seq: 5, limit: 100 })
        .await
        .unwrap()
        .is_empty());
}

/// The limit caps how many partials come back.
pub async fn partials_limit_honoured(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    for _ in 0..10 {
        s.publish_partial(PublishPartialRequest { id: c.job.id.clone(), data: vec![1], now: now() })
            .await
            .unwrap();
    }
    let page = s.partials(PartialsRequest { id: c.job.id.clone(), after_seq: 0, limit: 4 }).await.unwrap();
    assert_eq!(page.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
}

/// Publishing to an unknown job is `NotFound`.
pub async fn partials_unknown_job_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(
        s.publish_partial(PublishPartialRequest { id: JobId::new(), data: vec![1], now: now() }).await,
        ErrorKind::NotFound,
    );
}

/// Sequences are per job: two jobs each start at 1.
pub async fn partials_sequence_is_per_job(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = start(&*s, job("t", ""), now()).await;
    let b = start(&*s, job("t", ""), now()).await;
    assert_eq!(
        s.publish_partial(PublishPartialRequest { id: a.job.id.clone(), data: vec![1], now: now() })
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        s.publish_partial(PublishPartialRequest { id: a.job.id.clone(), data: vec![2], now: now() })
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        s.publish_partial(PublishPartialRequest { id: b.job.id.clone(), data: vec![3], now: now() })
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        s.partials(PartialsRequest { id: b.job.id.clone(), after_seq: 0, limit: 10 }).await.unwrap().len(),
        1
    );
}

/// Publishers racing on one job still get unique, gapless sequence numbers.
pub async fn partials_concurrent_publishers_gapless(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let (s, id) = (s.clone(), c.job.id.clone());
            tokio::spawn(async move {
                let mut seqs = Vec::new();
                for _ in 0..50 {
                    seqs.push(
                        s.publish_partial(PublishPartialRequest {
                            id: id.clone(),
                            data: vec![0],
                            now: now(),
                        })
                        .await
                        .unwrap(),
                    );
                }
                seqs
            })
        })
        .collect();
    let mut seqs = Vec::new();
    for t in tasks {
        seqs.extend(t.await.unwrap());
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=200).collect::<Vec<u64>>());
    let stored: Vec<_> = s
        .partials(PartialsRequest { id: c.job.id.clone(), after_seq: 0, limit: 1_000 })
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.seq)
        .collect();
    assert_eq!(stored, (1..=200).collect::<Vec<u64>>());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_partials {
    ($callback:path, $make:path) => {
        $callback!($make;
            partials::partials_thousand_in_order_gapless,
            partials::partials_after_seq,
            partials::partials_limit_honoured,
            partials::partials_unknown_job_is_not_found,
            partials::partials_sequence_is_per_job,
            partials::partials_concurrent_publishers_gapless,
        );
    };
}
