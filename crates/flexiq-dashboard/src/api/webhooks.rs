//! Webhooks: the hooks (their secrets never leave the server) and each hook's delivery log.
//!
//! Hooks are the runtime's `webhook:<name>` settings, which the settings routes hide and refuse;
//! these routes reach them only through the runtime's validating `set_hook` / `delete_hook`, so
//! the dashboard cannot store a hook the dispatcher would skip. A hook is shown with how many
//! secrets it holds and a short SHA-256 fingerprint of each, enough to tell a rotation happened
//! without revealing anything to sign with. The delivery log is the runtime's reader over the
//! delivery jobs, keyset-paged like the job listing.
//!
//! A write may also start a secret rotation without the caller knowing the current secret
//! (`rotate`: the newest stored secret is kept beside the new one), refuse to overwrite an
//! existing hook (`If-None-Match: *`, what the page's create form sends), and is refused when
//! its target resolves to a loopback or private address without `allow_private`
//! (`flexiq::webhooks::check_target`; the delivery checks again before every attempt). The
//! `/webhooks` page's forms call these same routes.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::Json;
use flexiq::webhooks::config::{validate_hook_name, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SECS};
use flexiq::webhooks::{
    check_target, delete_hook, deliveries, get_hook, list_hooks, set_hook, WebhookConfig, HOOK_PREFIX,
};
use flexiq::{Job, JobStatus};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::{IntoParams, ToSchema};

use crate::error::{ApiError, ApiJson, ApiQuery, ApiResult, ErrorBody};
use crate::state::AppState;

/// Deliveries per page when `limit` is not given.
pub const DEFAULT_DELIVERIES: i64 = 50;
/// Most deliveries per page.
pub const MAX_DELIVERIES: i64 = 1_000;
/// How long a hook write waits for its target's host to resolve before leaving it to the
/// delivery's own check.
const RESOLVE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
/// Hex characters of a secret's fingerprint.
const FINGERPRINT_HEX: usize = 8;

/// One hook as the dashboard shows it: everything but the secrets themselves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WebhookView {
    /// The hook's name.
    pub name: String,
    /// Where deliveries are POSTed; empty when the stored hook does not parse.
    pub url: String,
    /// Event names delivered (empty: every event).
    pub events: Vec<String>,
    /// Namespaces whose events are delivered (empty: every namespace).
    pub namespaces: Vec<String>,
    /// Whether loopback and private targets are allowed.
    pub allow_private: bool,
    /// Retries of a failed delivery after its first attempt.
    pub max_retries: u32,
    /// Timeout of one attempt (s).
    pub timeout_secs: u64,
    /// How many signing secrets it holds (two while rotating).
    pub secrets: usize,
    /// The first 8 hex characters of each secret's SHA-256, in order.
    pub secret_fingerprints: Vec<String>,
    /// Why the stored hook is not valid (the dispatcher skips it); `null` when it is.
    pub error: Option<String>,
}

fn fingerprint(secret: &str) -> String {
    let mut hex = hex::encode(Sha256::digest(secret.as_bytes()));
    hex.truncate(FINGERPRINT_HEX);
    hex
}

impl WebhookView {
    fn of(name: &str, cfg: &WebhookConfig) -> Self {
        WebhookView {
            name: name.to_string(),
            url: cfg.url.clone(),
            events: cfg.events.clone(),
            namespaces: cfg.namespaces.clone(),
            allow_private: cfg.allow_private,
            max_retries: cfg.max_retries,
            timeout_secs: cfg.timeout_secs,
            secrets: cfg.secrets.len(),
            secret_fingerprints: cfg.secrets.iter().map(|s| fingerprint(s)).collect(),
            error: None,
        }
    }

    fn broken(name: &str, error: &flexiq::Error) -> Self {
        WebhookView {
            name: name.to_string(),
            url: String::new(),
            events: Vec::new(),
            namespaces: Vec::new(),
            allow_private: false,
            max_retries: 0,
            timeout_secs: 0,
            secrets: 0,
            secret_fingerprints: Vec::new(),
            error: Some(error.to_string()),
        }
    }
}

/// Every stored hook by name, broken ones with their error.
pub async fn hooks(app: &AppState) -> ApiResult<Vec<WebhookView>> {
    Ok(list_hooks(&app.queue)
        .await?
        .iter()
        .map(|(name, parsed)| match parsed {
            Ok(cfg) => WebhookView::of(name, cfg),
            Err(e) => WebhookView::broken(name, e),
        })
        .collect())
}

/// The hooks (secrets never returned: only their count and fingerprints).
#[utoipa::path(get, path = "/webhooks", tag = "webhooks", responses((status = 200, body = Vec<WebhookView>)))]
pub async fn list_webhooks(State(app): State<AppState>) -> ApiResult<Json<Vec<WebhookView>>> {
    Ok(Json(hooks(&app).await?))
}

/// One hook (its secrets never returned); 404 when there is none, 400 when the stored hook
/// does not parse.
#[utoipa::path(get, path = "/webhooks/{name}", tag = "webhooks",
    params(("name" = String, Path, description = "Hook name")),
    responses((status = 200, body = WebhookView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_webhook(
    State(app): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<Json<WebhookView>> {
    match get_hook(&app.queue, &name).await? {
        Some(cfg) => Ok(Json(WebhookView::of(&name, &cfg))),
        None => Err(ApiError::not_found(format!("webhook {name} not found"))),
    }
}

/// A hook to create or replace.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookBody {
    /// Where deliveries are POSTed (`http` or `https` with a host).
    pub url: String,
    /// Event names delivered (`completed`, `dead`, a custom name, or `custom`); empty or
    /// absent: every event.
    #[serde(default)]
    pub events: Vec<String>,
    /// Namespaces whose events are delivered; empty or absent: every namespace.
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// One signing secret, or two while rotating, each at least 16 bytes. Absent when
    /// replacing a hook: its current secrets are kept.
    pub secrets: Option<Vec<String>>,
    /// Start a secret rotation instead of replacing the secrets (default false): `secrets`
    /// holds the one new secret, stored after the hook's newest current secret so deliveries
    /// carry a signature for each until a later write leaves only the new one. The hook must
    /// exist.
    #[serde(default)]
    pub rotate: bool,
    /// Allow loopback, private and link-local targets (default false).
    #[serde(default)]
    pub allow_private: bool,
    /// Retries of a failed delivery after its first attempt (default 8).
    pub max_retries: Option<u32>,
    /// Timeout of one attempt, 1 to 300 s (default 10).
    pub timeout_secs: Option<u64>,
}

/// The secrets after a rotation to the one secret in `given`: the newest of `current`, then it.
fn rotated(name: &str, current: &[String], given: Vec<String>) -> ApiResult<Vec<String>> {
    let [next]: [String; 1] = given.try_into().map_err(|g: Vec<String>| {
        ApiError::invalid(format!(
            "webhook {name}: rotate takes exactly one new secret in secrets, got {}",
            g.len()
        ))
    })?;
    match current.last() {
        Some(newest) if *newest == next => Err(ApiError::invalid(format!(
            "webhook {name}: the new secret is the hook's current secret, nothing to rotate"
        ))),
        Some(newest) => Ok(vec![newest.clone(), next]),
        None => Ok(vec![next]),
    }
}

/// The hook a body describes, keeping the `existing` hook's secrets when the body has none, or
/// adding the new one beside them when it rotates.
fn config_of(name: &str, body: WebhookBody, existing: Option<WebhookConfig>) -> ApiResult<WebhookConfig> {
    let secrets = match (body.secrets, body.rotate, existing) {
        (Some(s), false, _) => s,
        (None, true, _) => {
            return Err(ApiError::invalid(format!("webhook {name}: rotate needs the new secret in secrets")))
        }
        (Some(given), true, Some(existing)) => rotated(name, &existing.secrets, given)?,
        (None, false, Some(existing)) => existing.secrets,
        (Some(_), true, None) => {
            return Err(ApiError::invalid(format!("webhook {name}: rotate needs an existing hook")))
        }
        (None, false, None) => {
            return Err(ApiError::invalid(format!("webhook {name}: secrets are required for a new hook")))
        }
    };
    Ok(WebhookConfig {
        url: body.url,
        events: body.events,
        namespaces: body.namespaces,
        secrets,
        allow_private: body.allow_private,
        max_retries: body.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
        timeout_secs: body.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS),
    })
}

/// Creates or replaces a hook; 400 naming the field that is wrong (a target that resolves to
/// a loopback or private address needs `allow_private`); 412 when `If-None-Match: *` was sent
/// and the hook exists.
#[utoipa::path(put, path = "/webhooks/{name}", tag = "webhooks",
    params(
        ("name" = String, Path, description = "Hook name: letters, digits, '-', '_', '.'"),
        ("If-None-Match" = Option<String>, Header, description = "`*`: only create, never replace")
    ),
    request_body = WebhookBody,
    responses((status = 200, body = WebhookView), (status = 400, body = ErrorBody), (status = 412, body = ErrorBody)))]
pub async fn put_webhook(
    State(app): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<WebhookBody>,
) -> ApiResult<Json<WebhookView>> {
    validate_hook_name(&name)?;
    let create_only = headers.get(header::IF_NONE_MATCH).is_some_and(|v| v.as_bytes() == b"*");
    let existing = get_hook(&app.queue, &name).await?;
    if create_only && existing.is_some() {
        return Err(ApiError::new(
            StatusCode::PRECONDITION_FAILED,
            "precondition_failed",
            format!("webhook {name} already exists: edit or delete it instead of creating it"),
        ));
    }
    let cfg = config_of(&name, body, existing)?;
    cfg.validate(&name)?;
    check_target(&name, &cfg.url, cfg.allow_private, RESOLVE_WAIT).await?;
    set_hook(&app.queue, &name, &cfg).await?;
    Ok(Json(WebhookView::of(&name, &cfg)))
}

/// Removes a hook; 404 when there is none. Its queued deliveries fail without retrying.
#[utoipa::path(delete, path = "/webhooks/{name}", tag = "webhooks",
    params(("name" = String, Path, description = "Hook name")),
    responses((status = 204), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_webhook(State(app): State<AppState>, Path(name): Path<String>) -> ApiResult<StatusCode> {
    if delete_hook(&app.queue, &name).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("webhook {name} not found")))
    }
}

/// Filter and paging of a hook's delivery log. Empty values count as absent.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// Only deliveries in this status (`pending`, `running`, `completed`, `failed`, `dead`, ...).
    pub status: Option<String>,
    /// Rows per page, 1 to 1,000 (default 50).
    pub limit: Option<i64>,
    /// The previous page's `next_cursor`.
    pub after: Option<String>,
}

fn present(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// One delivery: a delivery job and what its metadata and result say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DeliveryView {
    /// The delivery job's id (its page is `/jobs/{job_id}`).
    pub job_id: String,
    /// The job's status (`completed`: delivered; `dead`: retries ran out).
    pub status: String,
    /// The event delivered.
    pub event: Option<String>,
    /// The event's id in the events stream.
    pub event_id: Option<String>,
    /// The job the event is about, when it is about one.
    pub event_job_id: Option<String>,
    /// The URL it was addressed to.
    pub url: Option<String>,
    /// Attempts started so far.
    pub attempts: u32,
    /// Retries allowed after the first attempt.
    pub max_retries: u32,
    /// The receiver's HTTP status of the successful attempt.
    pub response_status: Option<u16>,
    /// The last failed attempt's error.
    pub last_error: Option<String>,
    /// Enqueued (Unix ms).
    pub created_at: i64,
    /// Delivered or given up (Unix ms).
    pub finished_at: Option<i64>,
}

#[derive(Deserialize)]
struct DeliveryMeta {
    event: Option<String>,
    event_id: Option<String>,
    job_id: Option<String>,
    url: Option<String>,
}

#[derive(Deserialize)]
struct DeliveryResult {
    status: u16,
}

impl From<&Job> for DeliveryView {
    fn from(j: &Job) -> Self {
        let meta = j.metadata.as_deref().and_then(|m| serde_json::from_str::<DeliveryMeta>(m).ok());
        let response_status = j
            .result
            .as_deref()
            .and_then(|r| serde_json::from_slice::<DeliveryResult>(r).ok())
            .map(|r| r.status);
        DeliveryView {
            job_id: j.id.to_string(),
            status: j.status.as_str().to_string(),
            event: meta.as_ref().and_then(|m| m.event.clone()),
            event_id: meta.as_ref().and_then(|m| m.event_id.clone()),
            event_job_id: meta.as_ref().and_then(|m| m.job_id.clone()),
            url: meta.and_then(|m| m.url),
            attempts: j.attempt,
            max_retries: j.max_retries,
            response_status,
            last_error: j.last_error.clone(),
            created_at: j.created_at,
            finished_at: j.finished_at,
        }
    }
}

/// One keyset page of deliveries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DeliveryPage {
    /// The deliveries, newest first.
    pub items: Vec<DeliveryView>,
    /// Pass as `after` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// One page of the delivery log of hook `name`; 404 when no such hook is stored.
pub async fn delivery_page(app: &AppState, name: &str, q: &DeliveriesQuery) -> ApiResult<DeliveryPage> {
    validate_hook_name(name)?;
    if app.queue.get_setting(&format!("{HOOK_PREFIX}{name}")).await?.is_none() {
        return Err(ApiError::not_found(format!("webhook {name} not found")));
    }
    let status = present(&q.status).map(str::parse::<JobStatus>).transpose()?;
    let limit = q.limit.unwrap_or(DEFAULT_DELIVERIES);
    if !(1..=MAX_DELIVERIES).contains(&limit) {
        return Err(ApiError::invalid(format!(
            "limit {limit} for the deliveries of webhook {name} must be 1 to {MAX_DELIVERIES}"
        )));
    }
    let page = deliveries(&app.queue, Some(name), status, limit, present(&q.after)).await?;
    Ok(DeliveryPage {
        items: page.items.iter().map(DeliveryView::from).collect(),
        next_cursor: page.next_cursor,
    })
}

/// The delivery log of a hook, newest first, keyset-paged: pass `next_cursor` back as `after`.
/// A bad status, limit or cursor is 400; an unknown hook is 404.
#[utoipa::path(get, path = "/webhooks/{name}/deliveries", tag = "webhooks",
    params(("name" = String, Path, description = "Hook name"), DeliveriesQuery),
    responses((status = 200, body = DeliveryPage), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_deliveries(
    State(app): State<AppState>,
    Path(name): Path<String>,
    ApiQuery(q): ApiQuery<DeliveriesQuery>,
) -> ApiResult<Json<DeliveryPage>> {
    Ok(Json(delivery_page(&app, &name, &q).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_short_and_stable_and_hide_the_secret() {
        let f = fingerprint("0123456789abcdef");
        assert_eq!(f.len(), FINGERPRINT_HEX);
        assert_eq!(f, fingerprint("0123456789abcdef"));
        assert_ne!(f, fingerprint("0123456789abcdeg"));
    }
}
