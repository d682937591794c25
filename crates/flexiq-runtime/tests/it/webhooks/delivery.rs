//! Deliveries by a running worker: signatures under a rotation, a retry after a 500, and a
//! private target refused.

use std::time::Duration;

use flexiq_runtime::webhooks::dispatch::{DispatchConfig, WebhookDispatcher};
use flexiq_runtime::webhooks::{self, set_hook, verify, Delivery, WebhookConfig};
use flexiq_runtime::{EnqueueOptions, Job, JobStatus, Queue, Worker, WorkerHandle};

use super::receiver::Receiver;
use crate::common::{eventually, fast_config, open};

const OLD: &str = "old-secret-0123456789";
const NEW: &str = "new-secret-0123456789";

/// Sets `hook`, starts the dispatch cursor (as a worker's first round would) and a worker
/// running task `t`, then runs one `t` job to completion.
async fn run_one_job(q: &Queue, hook: WebhookConfig) -> (WorkerHandle, String) {
    set_hook(q, "orders", &hook).await.unwrap();
    WebhookDispatcher::new(q, DispatchConfig::default()).unwrap().run_once().await.unwrap();
    let mut w = Worker::new(q.clone(), fast_config()).unwrap();
    w.register("t", |_| async { Ok(Some(b"done".to_vec())) }).unwrap();
    let running = w.start();
    let id = q.enqueue("t", b"x".to_vec(), EnqueueOptions::default()).await.unwrap();
    q.result(id.as_str(), Some(Duration::from_secs(10)), None).await.unwrap();
    (running, id.to_string())
}

/// The delivery log of hook `orders`.
async fn deliveries(q: &Queue) -> Vec<Job> {
    webhooks::deliveries(q, Some("orders"), None, 100, None).await.unwrap().items
}

fn completed_only(url: String) -> WebhookConfig {
    WebhookConfig {
        events: vec!["completed".into()],
        secrets: vec![OLD.into(), NEW.into()],
        allow_private: true,
        ..WebhookConfig::new(url, OLD)
    }
}

#[tokio::test]
async fn a_delivery_is_signed_with_both_secrets_of_a_rotation_and_each_verifies() {
    let q = open().await;
    let rx = Receiver::start(&[]).await;
    let (running, job_id) = run_one_job(&q, completed_only(rx.url())).await;
    eventually(10, "the delivery", || async { !rx.received().is_empty() }).await;
    eventually(10, "the delivery job completed", || async {
        deliveries(&q).await.iter().any(|j| j.status == JobStatus::Completed)
    })
    .await;
    let got = rx.received()[0].clone();
    let sig = got.header("flexiq-signature");
    assert_eq!(sig.matches("v1=").count(), 2, "{sig}");
    let now = q.now_ms() / 1_000;
    for secret in [OLD, NEW] {
        verify(&sig, &got.body, &[secret.to_string()], 300, now).unwrap();
    }
    assert!(verify(&sig, &got.body, &["another-secret-0123".to_string()], 300, now).is_err());
    assert!(verify(&sig, b"{}", &[OLD.to_string()], 300, now).is_err(), "a changed body fails");

    let d: Delivery = serde_json::from_slice(&got.body).unwrap();
    assert_eq!((d.hook.as_str(), d.event.name.as_str()), ("orders", "completed"));
    assert_eq!(d.event.job_id.as_deref(), Some(job_id.as_str()));
    assert_eq!(d.namespace, q.namespace());
    assert_eq!(got.header("flexiq-event-id"), d.event.id);
    assert_eq!(got.header("content-type"), "application/json");

    // The delivery log: one job for the one completed event, its result the answer's status.
    let log = deliveries(&q).await;
    assert_eq!(log.len(), 1, "only the completed event matches the filter: {log:?}");
    let completed = webhooks::deliveries(&q, None, Some(JobStatus::Completed), 10, None).await.unwrap();
    assert_eq!(completed.items.len(), 1);
    assert!(webhooks::deliveries(&q, Some("other"), None, 10, None).await.unwrap().items.is_empty());
    assert_eq!(log[0].result.as_deref(), Some(&br#"{"status":200}"#[..]));
    assert!(log[0].metadata.as_deref().unwrap().contains(r#""hook":"orders""#));
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_delivery_answered_500_is_retried_and_then_succeeds() {
    let q = open().await;
    let rx = Receiver::start(&[500]).await;
    let (running, _) = run_one_job(&q, completed_only(rx.url())).await;
    eventually(15, "the retried delivery", || async { rx.received().len() == 2 }).await;
    let got = rx.received();
    let delivery_id = got[0].header("flexiq-delivery-id");
    assert_eq!(got[1].header("flexiq-delivery-id"), delivery_id, "the same job retried");
    assert_eq!((got[0].header("flexiq-attempt"), got[1].header("flexiq-attempt")), ("1".into(), "2".into()));
    assert_eq!(got[0].body, got[1].body, "the same body each attempt");
    for r in &got {
        verify(&r.header("flexiq-signature"), &r.body, &[NEW.to_string()], 300, q.now_ms() / 1_000).unwrap();
    }
    eventually(10, "the delivery job completed", || async {
        q.get_job(&delivery_id).await.unwrap().is_some_and(|j| j.status == JobStatus::Completed)
    })
    .await;
    let errors = q.get_job_errors(&delivery_id).await.unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].error.contains("webhook orders") && errors[0].error.contains("HTTP 500"), "{errors:?}");
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_private_target_is_refused_without_allow_private() {
    let q = open().await;
    let rx = Receiver::start(&[]).await;
    let hook = WebhookConfig { allow_private: false, ..completed_only(rx.url()) };
    let (running, _) = run_one_job(&q, hook).await;
    eventually(10, "the refused delivery", || async {
        deliveries(&q).await.iter().any(|j| j.status == JobStatus::Failed)
    })
    .await;
    let job = deliveries(&q).await.remove(0);
    let error = job.last_error.clone().unwrap_or_default();
    assert!(error.contains("127.0.0.1") && error.contains("allow_private"), "{error}");
    assert_eq!(job.attempt, 1, "a refusal is not retried");
    assert!(rx.received().is_empty(), "nothing was sent to the private address");
    running.shutdown().await.unwrap();
}
