//! Query plans: claims, keyset pages and events pages are index seeks, never sequential scans
//! of jobs or events.

use flexiq_core::store::{AckRequest, ClaimRequest, Inspect, ListJobsAfterRequest};
use flexiq_core::{JobFilter, JobStatus};

use crate::common::{admin, claim, completes, drop_schema, enqueue_n, fresh_schema, open};
use flexiq_core::store::JobStore;

fn assert_index_only(plan: &str) {
    assert!(!plan.contains("Seq Scan on jobs"), "sequential scan of jobs:\n{plan}");
    assert!(plan.contains("Index"), "no index used:\n{plan}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_and_keyset_pages_are_index_seeks() {
    let schema = fresh_schema("plan");
    let s = open(&schema, 4).await;
    let now = 1_000_000;
    for q in ["a", "b", "c", "d"] {
        enqueue_n(&s, q, 5_000, now).await;
    }
    // Some history beside the backlog: running and completed jobs.
    let got = claim(&s, "a", 500, "w", now).await.unwrap();
    s.ack(AckRequest { acks: completes(&got[..250]), now }).await.unwrap();
    admin().await.batch_execute(&format!("ANALYZE \"{schema}\".jobs")).await.unwrap();

    for queues in [vec![], vec!["b".to_string()], vec!["a".to_string(), "c".to_string()]] {
        let plan =
            s.explain_claim(&ClaimRequest { queues, limit: 100, worker_id: "w".into(), now }).await.unwrap();
        assert_index_only(&plan);
    }
    let filters = [
        JobFilter::default(),
        JobFilter { status: Some(JobStatus::Pending), ..Default::default() },
        JobFilter { status: Some(JobStatus::Completed), ..Default::default() },
        JobFilter { status: Some(JobStatus::Running), ..Default::default() },
    ];
    for f in &filters {
        let page = ListJobsAfterRequest { filter: f.clone(), limit: 50, after: None };
        let first = s.list_jobs_after(page).await.unwrap();
        assert_index_only(&s.explain_list_jobs_after(f, 50, None).await.unwrap());
        let cursor = first.next_cursor.expect("more pages");
        assert_index_only(&s.explain_list_jobs_after(f, 50, Some(&cursor)).await.unwrap());
    }
    drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fair_claim_is_index_seeks() {
    use flexiq_core::store::{ClaimFairRequest, UpsertStagesRequest, WorkflowServes};
    use flexiq_core::{EnqueueOptions, NewJob};

    let schema = fresh_schema("fairplan");
    let s = open(&schema, 2).await;
    let now = 1_000_000;
    let stage = |i: usize| {
        let opts = EnqueueOptions {
            queue: Some("workflow".into()),
            group_key: Some(format!("tenant-{}", i % 40)),
            workflow_run_id: Some(format!("run-{i}")),
            workflow_stage_id: Some("s".into()),
            ..Default::default()
        };
        NewJob::build("wf", b"{}".to_vec(), opts, now).unwrap()
    };
    for chunk in (0..20_000).collect::<Vec<_>>().chunks(2_000) {
        let jobs = chunk.iter().map(|i| stage(*i)).collect();
        flexiq_core::store::Workflows::upsert_stages(&s, UpsertStagesRequest { jobs, now }).await.unwrap();
    }
    enqueue_n(&s, "workflow", 5_000, now).await;
    admin().await.batch_execute(&format!("ANALYZE \"{schema}\".jobs")).await.unwrap();
    let serves = vec![WorkflowServes { workflow_id: "wf".into(), definition_version: None }];
    for serves in [Vec::new(), serves] {
        for group_cap in [Some(1), None] {
            let req = ClaimFairRequest {
                queues: vec!["workflow".into()],
                serves: serves.clone(),
                workers: (0..8).map(|w| format!("w{w}")).collect(),
                group_cap,
                now,
            };
            let plan = s.explain_claim_fair(&req).await.unwrap();
            assert_index_only(&plan);
            if group_cap.is_some() {
                assert!(plan.contains("jobs_fair_claim"), "the fair index serves the group walk:\n{plan}");
            }
        }
    }
    drop_schema(&schema).await;
}

/// The lines of the common table expression `name` in `plan`.
fn cte<'a>(plan: &'a str, name: &str) -> &'a str {
    let head = format!("  CTE {name}\n");
    let at = plan.find(&head).unwrap_or_else(|| panic!("no CTE {name}:\n{plan}")) + head.len();
    let rest = &plan[at..];
    &rest[..rest.find("\n  CTE ").unwrap_or(rest.len())]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generic_fair_claim_made_on_new_tables_seeks_jobs_by_index() {
    use flexiq_core::store::{ClaimFairRequest, UpsertStagesRequest, Workflows};
    use flexiq_core::{EnqueueOptions, NewJob};

    // Never analyzed: the statistics of a deployment's first minutes, when the host loop's
    // connections make the generic plans they keep.
    let schema = fresh_schema("genplan");
    let s = open(&schema, 2).await;
    let now = 1_000_000;
    let jobs = (0..1_000)
        .map(|i| {
            let opts = EnqueueOptions {
                queue: Some("workflow".into()),
                group_key: Some(format!("tenant-{}", i % 100)),
                workflow_run_id: Some(format!("run-{}", i % 10)),
                workflow_stage_id: Some(format!("stage-{i}")),
                ..Default::default()
            };
            NewJob::build("wf", b"{}".to_vec(), opts, now).unwrap()
        })
        .collect();
    s.upsert_stages(UpsertStagesRequest { jobs, now }).await.unwrap();
    for group_cap in [None, Some(2)] {
        let req = ClaimFairRequest {
            queues: vec!["workflow".into()],
            serves: Vec::new(),
            workers: (0..8).map(|w| format!("w{w}")).collect(),
            group_cap,
            now,
        };
        let plan = s.explain_claim_fair_generic(&req).await.unwrap();
        assert!(plan.contains("jobs_pkey"), "the claimed rows are not found by id:\n{plan}");
        assert_index_only(&plan);
        // The hosts' completions in the same statement probe the primary key per ack, not an
        // index of the namespace's running jobs.
        let plan = s.explain_complete_and_claim_fair_generic(&req).await.unwrap();
        assert_index_only(&plan);
        let done = cte(&plan, "done");
        assert!(
            done.contains("Index Scan using jobs_pkey") && done.contains("Index Cond: (id = a.id)"),
            "{plan}"
        );
    }
    // A request the claim refuses is refused here too, and names are passed as literals intact.
    let bad = ClaimFairRequest {
        queues: vec!["workflow".into()],
        serves: Vec::new(),
        workers: Vec::new(),
        group_cap: None,
        now,
    };
    let e = s.explain_claim_fair_generic(&bad).await.unwrap_err();
    assert!(matches!(e, flexiq_core::Error::InvalidArgument(_)), "{e:?}");
    let e = s.explain_complete_and_claim_fair_generic(&bad).await.unwrap_err();
    assert!(matches!(e, flexiq_core::Error::InvalidArgument(_)), "{e:?}");
    let quoted = ClaimFairRequest { workers: vec!["host 'a'".into()], group_cap: Some(1), ..bad };
    assert_index_only(&s.explain_claim_fair_generic(&quoted).await.unwrap());
    // Nothing was claimed.
    assert_eq!(s.count_pending("workflow").await.unwrap(), 1_000);
    drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_events_page_is_an_index_seek() {
    use flexiq_core::store::{Events, ReadEventsRequest};

    let schema = fresh_schema("evplan");
    let s = open(&schema, 4).await;
    let now = 1_000_000;
    enqueue_n(&s, "a", 20_000, now).await;
    let got = claim(&s, "a", 1_000, "w", now).await.unwrap();
    s.ack(AckRequest { acks: completes(&got), now }).await.unwrap();
    admin().await.batch_execute(&format!("ANALYZE \"{schema}\".events")).await.unwrap();
    let page = s.read_events(ReadEventsRequest { after: None, block_ms: 0, limit: 100 }).await.unwrap();
    for after in [None, Some(page[99].id.as_str())] {
        let plans = s.explain_read_events(after, 100).await.unwrap();
        for plan in plans.split("\n\n") {
            assert!(!plan.contains("Seq Scan on events"), "sequential scan of events:\n{plan}");
            // The page walks the index in stream order under its limit; only the page's own
            // rows are sorted again, after the join that adds what waits above the horizon.
            let walks = plan.split("->  Limit").skip(1).any(|below| {
                below.lines().take(4).any(|l| l.contains("Index Scan using events_order on events e"))
            });
            assert!(walks, "the stream order index serves the page:\n{plan}");
        }
    }
    drop_schema(&schema).await;
}
