//! The combined listing indexes (status + queue, status + task): status changes move jobs
//! between them, archiving removes them, and `migrate()` backfills them for jobs written
//! before they existed.

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ArchiveTerminalRequest, ClaimRequest, EnqueueRequest, Inspect, JobStore,
    ListJobsAfterRequest, ListJobsRequest, Maintenance, Schema,
};
use flexiq_core::{EnqueueOptions, JobFilter, JobId, JobStatus, NewJob};
use flexiq_store_redis::RedisStore;
use fred::prelude::*;

use crate::harness::RedisHarness;

const NOW: i64 = 1_700_000_000_000;

fn filter(status: JobStatus, queue: Option<&str>, task: Option<&str>) -> JobFilter {
    JobFilter {
        status: Some(status),
        queue: queue.map(str::to_string),
        task: task.map(str::to_string),
        ..Default::default()
    }
}

/// Every id the keyset listing of `f` returns, page by page (pages of 3).
async fn listed(s: &RedisStore, f: &JobFilter) -> Vec<JobId> {
    let (mut out, mut after) = (Vec::new(), None);
    loop {
        let page = s
            .list_jobs_after(ListJobsAfterRequest { filter: f.clone(), limit: 3, after: after.clone() })
            .await
            .unwrap();
        out.extend(page.items.into_iter().map(|j| j.id));
        match page.next_cursor {
            Some(c) => after = Some(c),
            None => return out,
        }
    }
}

/// Combined index keys of namespace `ns` left on the server.
async fn combined_keys(c: &Client, h: &RedisHarness, ns: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for kind in ["sq", "st"] {
        let pattern = format!("{{{}:{ns}}}:ix:{kind}:*", h.prefix);
        let (_, found): (String, Vec<String>) = c
            .custom(
                fred::types::CustomCommand::new_static("SCAN", fred::types::ClusterHash::Random, false),
                vec!["0".to_string(), "MATCH".into(), pattern, "COUNT".into(), "100000".into()],
            )
            .await
            .unwrap();
        keys.extend(found);
    }
    keys.sort();
    keys
}

async fn setup(s: &RedisStore) -> Vec<JobId> {
    let jobs: Vec<NewJob> = (0..12)
        .map(|i| {
            let opts = EnqueueOptions { queue: Some(["qa", "qb"][i % 2].into()), ..Default::default() };
            NewJob::build(["ta", "tb", "tc"][i % 3], b"x".to_vec(), opts, NOW + i as i64).unwrap()
        })
        .collect();
    let out = s.enqueue(EnqueueRequest { jobs, max_pending: None, now: NOW }).await.unwrap();
    out.into_iter().map(|e| e.id).collect()
}

/// What a full listing filtered in memory returns for `f`.
async fn expected(s: &RedisStore, f: &JobFilter) -> Vec<JobId> {
    let all =
        s.list_jobs(ListJobsRequest { filter: JobFilter::default(), limit: 1_000, offset: 0 }).await.unwrap();
    all.into_iter().filter(|j| f.matches(j)).map(|j| j.id).collect()
}

#[tokio::test]
async fn combined_listings_follow_every_status_change_and_the_archive() {
    let h = RedisHarness::new();
    let s = h.store("combined").await.unwrap();
    let c = Builder::from_config(Config::from_url(&h.url).unwrap()).build().unwrap();
    c.init().await.unwrap();
    setup(&s).await;
    let claimed = s
        .claim(ClaimRequest { queues: vec!["qa".into()], limit: 4, worker_id: "w".into(), now: NOW + 100 })
        .await
        .unwrap();
    let acks = claimed[..2]
        .iter()
        .map(|c| Ack { job_id: c.job.id.clone(), fence: c.fence, kind: AckKind::Complete { result: None } })
        .chain(std::iter::once(Ack {
            job_id: claimed[2].job.id.clone(),
            fence: claimed[2].fence,
            kind: AckKind::Fail { error: "x".into(), retryable: false },
        }))
        .collect();
    s.ack(AckRequest { acks, now: NOW + 10 }).await.unwrap();
    let shapes =
        [(Some("qa"), None), (Some("qb"), None), (None, Some("ta")), (None, Some("tb")), (None, Some("tc"))];
    for st in [JobStatus::Pending, JobStatus::Running, JobStatus::Completed, JobStatus::Failed] {
        for (q, t) in shapes {
            let f = filter(st, q, t);
            assert_eq!(listed(&s, &f).await, expected(&s, &f).await, "{st:?} {q:?} {t:?}");
        }
    }
    assert_eq!(listed(&s, &filter(JobStatus::Running, Some("qa"), None)).await.len(), 1);
    // No filter merges the status indexes: pages of 3 from four of them, in one order.
    let all: Vec<JobId> = s
        .list_jobs(ListJobsRequest { filter: JobFilter::default(), limit: 1_000, offset: 0 })
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(all.len(), 12);
    assert_eq!(listed(&s, &JobFilter::default()).await, all);
    for offset in [0, 2, 5, 11] {
        let page: Vec<JobId> = s
            .list_jobs(ListJobsRequest { filter: JobFilter::default(), limit: 3, offset })
            .await
            .unwrap()
            .into_iter()
            .map(|j| j.id)
            .collect();
        assert_eq!(page, all[offset as usize..(offset as usize + 3).min(12)], "offset {offset}");
    }
    assert_eq!(
        s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: NOW + 1_000, limit: 100, now: NOW + 1_000 })
            .await
            .unwrap(),
        3
    );
    let left = combined_keys(&c, &h, "combined").await;
    assert!(
        left.iter().all(|k| k.contains(":sq:0:")
            || k.contains(":st:0:")
            || k.contains(":sq:1:")
            || k.contains(":st:1:")),
        "archived jobs leave no completed or failed index behind: {left:?}"
    );
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn migrate_backfills_the_combined_indexes_of_older_jobs_once() {
    let h = RedisHarness::new();
    let s = h.store("older").await.unwrap();
    let c = Builder::from_config(Config::from_url(&h.url).unwrap()).build().unwrap();
    c.init().await.unwrap();
    let ids = setup(&s).await;
    s.claim(ClaimRequest { queues: vec![], limit: 3, worker_id: "w".into(), now: NOW + 100 }).await.unwrap();
    // As an older build left them: no combined indexes, no index version.
    let keys = combined_keys(&c, &h, "older").await;
    assert!(!keys.is_empty());
    let _: i64 = c.del(keys).await.unwrap();
    let _: i64 = c.del(format!("{{{}:older}}:ixv", h.prefix)).await.unwrap();
    let pending = filter(JobStatus::Pending, Some("qa"), None);
    assert!(listed(&s, &pending).await.is_empty(), "the listing reads the combined index");

    s.migrate().await.unwrap();
    for f in [
        pending.clone(),
        filter(JobStatus::Running, None, Some("ta")),
        filter(JobStatus::Pending, None, Some("tc")),
    ] {
        assert_eq!(listed(&s, &f).await, expected(&s, &f).await, "{f:?}");
    }
    assert_eq!(listed(&s, &filter(JobStatus::Running, None, None)).await.len(), 3);
    let mut all = Vec::new();
    for st in [JobStatus::Pending, JobStatus::Running] {
        for q in ["qa", "qb"] {
            all.extend(listed(&s, &filter(st, Some(q), None)).await);
        }
    }
    all.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(all, want, "every job is in exactly one status + queue index");

    // Done once: a second migrate does not walk again (a key removed now stays removed).
    let one = format!("{{{}:older}}:ix:sq:0:qb", h.prefix);
    let _: i64 = c.del(&one).await.unwrap();
    s.migrate().await.unwrap();
    assert!(listed(&s, &filter(JobStatus::Pending, Some("qb"), None)).await.is_empty());
    let _ = c.quit().await;
    h.cleanup_now().await;
}
