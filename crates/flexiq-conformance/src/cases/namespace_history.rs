//! Namespaces and per-job history: metrics, retention, partials, logs, replays and graphs
//! never cross a namespace boundary.

use std::collections::BTreeMap;

use flexiq_core::store::{
    AppendLogRequest, GetMetricsRequest, PartialsRequest, PublishPartialRequest, ReplayRequest,
    RetentionRequest, SetProgressRequest,
};
use flexiq_core::{EffectiveRetention, ErrorKind, Retention, RetentionTable, RetentionWindows};

use crate::fixtures::{assert_kind, at, complete, fail, job, job_after, now, open, put, start};
use crate::Harness;

/// Metric rows are per namespace.
pub async fn namespace_metrics_independent(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    let c = start(&*a, job("t", ""), now()).await;
    complete(&*a, &c, None, at(1)).await;
    assert_eq!(a.get_metrics(GetMetricsRequest { since_ms: 0, task: None }).await.unwrap().len(), 1);
    assert!(b.get_metrics(GetMetricsRequest { since_ms: 0, task: None }).await.unwrap().is_empty());
    assert!(b
        .get_metrics(GetMetricsRequest { since_ms: 0, task: Some("t".into()) })
        .await
        .unwrap()
        .is_empty());
}

/// Published retention and retention sweeps are per namespace.
pub async fn namespace_retention_independent(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    let eff = EffectiveRetention {
        enabled: true,
        defaulted: false,
        namespace: "ns-a".into(),
        reported_at: now(),
        windows: Retention::recommended().windows_ms(),
    };
    a.publish_effective_retention(&eff).await.unwrap();
    assert_eq!(b.effective_retention().await.unwrap(), None);
    let c = start(&*a, job("t", ""), now()).await;
    fail(&*a, &c, "boom", true, now()).await;
    let w =
        RetentionWindows(RetentionTable::ALL.iter().map(|t| (*t, Some(1_000))).collect::<BTreeMap<_, _>>());
    let counted =
        b.retention_counts(RetentionRequest { windows: w.clone(), now: at(1_000_000) }).await.unwrap();
    assert!(counted.values().all(|n| *n == 0), "{counted:?}");
    b.retention_purge(RetentionRequest { windows: w.clone(), now: at(1_000_000) }).await.unwrap();
    assert_eq!(a.job_errors(&c.job.id).await.unwrap().len(), 1);
    assert_eq!(a.get_metrics(GetMetricsRequest { since_ms: 0, task: None }).await.unwrap().len(), 1);
}

/// Partials, logs, replays and error history of a job are unreachable from another namespace.
pub async fn namespace_job_history_unreachable(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    let c = start(&*a, job("t", ""), now()).await;
    assert_kind(
        b.publish_partial(PublishPartialRequest { id: c.job.id.clone(), data: vec![1], now: now() }).await,
        ErrorKind::NotFound,
    );
    assert_kind(
        b.append_log(AppendLogRequest {
            id: c.job.id.clone(),
            level: "info".into(),
            message: "x".into(),
            now: now(),
        })
        .await,
        ErrorKind::NotFound,
    );
    assert_kind(b.replay(ReplayRequest { id: c.job.id.clone(), now: now() }).await, ErrorKind::NotFound);
    assert_kind(b.job_errors(&c.job.id).await, ErrorKind::NotFound);
    assert_eq!(
        b.set_progress(SetProgressRequest { id: c.job.id.clone(), fence: c.fence, progress: 50.0 })
            .await
            .unwrap(),
        flexiq_core::AckOutcome::Superseded
    );
    assert_eq!(crate::fixtures::get(&*a, &c.job.id).await.progress, None);
    assert!(a.job_logs(&c.job.id).await.unwrap().is_empty());
    assert!(a
        .partials(PartialsRequest { id: c.job.id.clone(), after_seq: 0, limit: 10 })
        .await
        .unwrap()
        .is_empty());
}

/// A job of another namespace is `NotFound` naming it, exactly like an unknown id.
pub async fn namespace_dag_of_foreign_job_is_not_found(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    let x = put(&*a, job("x", ""), now()).await;
    put(&*a, job_after("y", &[&x]), now()).await;
    assert_eq!(a.job_dag(&x).await.unwrap().edges.len(), 1);
    let e = b.job_dag(&x).await.unwrap_err();
    assert_eq!(e.kind(), flexiq_core::ErrorKind::NotFound, "{e}");
    assert!(e.to_string().contains(x.as_str()), "{e}");
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_namespace_history {
    ($callback:path, $make:path) => {
        $callback!($make;
            namespace_history::namespace_metrics_independent,
            namespace_history::namespace_retention_independent,
            namespace_history::namespace_job_history_unreachable,
            namespace_history::namespace_dag_of_foreign_job_is_not_found,
        );
    };
}
