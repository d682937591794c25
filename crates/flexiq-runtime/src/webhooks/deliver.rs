//! One delivery attempt: the handler of the reserved task [`DELIVER_TASK`](super::DELIVER_TASK).
//!
//! Deliveries are ordinary jobs so that the queue's own machinery gives them what a webhook
//! sender needs: they survive restarts, a failed attempt is retried with exponential backoff
//! until the hook's `max_retries` are spent and then dead-lettered, and every attempt's error
//! is kept (`job_errors`), which makes the jobs of queue `flexiq.webhooks` the delivery log.
//! Each attempt reads its hook again, so a rotated secret or a corrected URL applies to the
//! retries of deliveries already queued; a deleted hook fails them for good.
//!
//! The request body is the job's payload as it is ([`Delivery`] as JSON), signed afresh each
//! attempt with the attempt's timestamp (see [`super::signature`]). A 2xx answer completes the
//! job with `{"status": <code>}` as its result; any other answer, a timeout or a connection
//! error is a retryable failure naming the hook, the event and the status.

use std::time::Duration;

use flexiq_core::events::QueueEvent;
use serde::{Deserialize, Serialize};

use super::config::get_hook;
use super::signature::{sign, SIGNATURE_HEADER};
use super::target::resolve;
use crate::error::Error;
use crate::worker::{handler, Handler, HandlerError, HandlerResult, JobContext};

/// What one delivery carries: the job's payload and, byte for byte, the request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// The hook it goes to.
    pub hook: String,
    /// The namespace the event happened in.
    pub namespace: String,
    /// The event.
    pub event: QueueEvent,
}

/// Most bytes of a failed answer's body kept in the job's error.
const ERROR_BODY_BYTES: usize = 200;

/// The handler every worker registers for deliveries.
pub(crate) fn delivery_handler() -> Handler {
    handler(deliver)
}

fn fatal(e: Error) -> HandlerError {
    HandlerError::fatal(e.to_string())
}

fn from_error(e: Error) -> HandlerError {
    let retryable = e.as_core().is_some_and(|c| c.is_retryable());
    HandlerError { message: e.to_string(), retryable }
}

async fn deliver(ctx: JobContext) -> HandlerResult {
    let body = ctx.payload().to_vec();
    let d: Delivery = serde_json::from_slice(&body)
        .map_err(|e| HandlerError::fatal(format!("delivery job {} has no valid payload: {e}", ctx.id())))?;
    let (hook, event_id) = (d.hook.as_str(), d.event.id.as_str());
    let cfg = get_hook(ctx.queue(), hook).await.map_err(from_error)?.ok_or_else(|| {
        HandlerError::fatal(format!("webhook {hook} is no longer configured: event {event_id} not delivered"))
    })?;
    let url =
        reqwest::Url::parse(&cfg.url).map_err(|e| HandlerError::fatal(format!("webhook {hook}: {e}")))?;
    let target = resolve(hook, &url, cfg.allow_private).await.map_err(|e| match e.kind() {
        Some(flexiq_core::ErrorKind::InvalidArgument) => fatal(e),
        _ => from_error(e),
    })?;
    let client = reqwest::Client::builder()
        .resolve_to_addrs(&target.host, &target.addrs)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(cfg.timeout_secs))
        .user_agent(concat!("flexiq-webhooks/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| HandlerError::retryable(format!("webhook {hook}: cannot build an HTTP client: {e}")))?;
    let timestamp = ctx.queue().now_ms().div_euclid(1_000);
    let resp = client
        .post(url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(SIGNATURE_HEADER, sign(&cfg.secrets, timestamp, &body))
        .header("flexiq-hook", hook)
        .header("flexiq-event-id", event_id)
        .header("flexiq-delivery-id", ctx.id().as_str())
        .header("flexiq-attempt", ctx.attempt().to_string())
        .body(body)
        .send()
        .await
        .map_err(|e| {
            HandlerError::retryable(format!("webhook {hook}: event {event_id} to {url}: request failed: {e}"))
        })?;
    let status = resp.status();
    if status.is_success() {
        tracing::debug!(hook, event_id, status = status.as_u16(), "webhook delivered");
        let result = serde_json::json!({ "status": status.as_u16() });
        return Ok(Some(result.to_string().into_bytes()));
    }
    let text = resp.text().await.unwrap_or_default();
    let mut end = text.len().min(ERROR_BODY_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Err(HandlerError::retryable(format!(
        "webhook {hook}: event {event_id} to {url}: HTTP {}: {}",
        status.as_u16(),
        &text[..end]
    )))
}
