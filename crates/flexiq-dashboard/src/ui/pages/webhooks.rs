//! Webhooks: each hook's target and filters, and its latest deliveries linked to their jobs.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Extension;
use flexiq::webhooks::QUEUE;
use maud::html;

use crate::api::webhooks::{delivery_page, hooks, DeliveriesQuery, DeliveryPage};
use crate::auth::guard::Principal;
use crate::state::AppState;
use crate::ui::layout::{page, status, time};
use crate::ui::PageResult;

/// Deliveries shown per hook.
const LATEST: i64 = 10;

/// The job listing's query for every delivery of hook `name` (the runtime's log filter).
fn all_deliveries(name: &str) -> String {
    let metadata = format!("\"hook\":\"{name}\"");
    serde_urlencoded::to_string([("queue", QUEUE), ("metadata", metadata.as_str())]).unwrap_or_default()
}

/// `GET /webhooks`
pub async fn webhooks(State(app): State<AppState>, who: Option<Extension<Principal>>) -> PageResult {
    let hooks = hooks(&app).await?;
    let latest = DeliveriesQuery { limit: Some(LATEST), ..Default::default() };
    let mut logs: Vec<Option<DeliveryPage>> = Vec::with_capacity(hooks.len());
    for h in &hooks {
        if h.error.is_some() {
            logs.push(None);
            continue;
        }
        // A hook deleted since the list was read simply shows no log.
        match delivery_page(&app, &h.name, &latest).await {
            Ok(log) => logs.push(Some(log)),
            Err(e) if e.status == StatusCode::NOT_FOUND => logs.push(None),
            Err(e) => return Err(e.into()),
        }
    }
    let body = html! {
        table.grid #webhooks {
            thead { tr {
                th { "name" } th { "url" } th { "events" } th { "namespaces" } th { "allow private" }
                th { "secrets" } th { "retries" } th { "timeout (s)" } th { "" }
            } }
            tbody { @for h in &hooks { tr data-webhook=(h.name) {
                td { a href={ "#hook-" (h.name) } { (h.name) } }
                @if let Some(e) = &h.error {
                    td.err colspan="7" { "not a valid hook (skipped by the dispatcher): " (e) }
                } @else {
                    td { code { (h.url) } }
                    td { @if h.events.is_empty() { span.muted { "every event" } } @else { (h.events.join(", ")) } }
                    td { @if h.namespaces.is_empty() { span.muted { "every namespace" } } @else { (h.namespaces.join(", ")) } }
                    td { (if h.allow_private { "yes" } else { "no" }) }
                    td { (h.secrets) " " span.muted { "(" (h.secret_fingerprints.join(", ")) ")" } }
                    td.num { (h.max_retries) }
                    td.num { (h.timeout_secs) }
                }
                td { button data-call={ "DELETE /api/v1/webhooks/" (h.name) }
                    data-confirm={ "Delete webhook " (h.name) "? Its queued deliveries will fail." } { "Delete" } }
            } } }
        }
        @if hooks.is_empty() {
            p.muted { "No webhooks. Create one with " code { "PUT /api/v1/webhooks/{name}" } "." }
        }
        @for (h, log) in hooks.iter().zip(&logs) {
            @if let Some(log) = log {
                h2 id={ "hook-" (h.name) } { "Latest deliveries of " (h.name) }
                table.grid.deliveries data-deliveries=(h.name) {
                    thead { tr {
                        th { "enqueued" } th { "event" } th { "status" } th { "attempts" }
                        th { "answer" } th { "last error" } th { "job" }
                    } }
                    tbody { @for d in &log.items { tr data-delivery=(d.job_id) {
                        td { (time(Some(d.created_at))) }
                        td { (d.event.as_deref().unwrap_or("")) }
                        td { (status(&d.status)) }
                        td.num { (d.attempts) " / " (d.max_retries + 1) }
                        td.num { @if let Some(s) = d.response_status { (s) } }
                        td.err { (d.last_error.as_deref().unwrap_or("")) }
                        td { a href={ "/jobs/" (d.job_id) } { "job" } }
                    } } }
                }
                @if log.items.is_empty() { p.muted { "No deliveries yet." } }
                p { a href={ "/jobs?" (all_deliveries(&h.name)) } {
                    @if log.next_cursor.is_some() { "Older deliveries →" } @else { "As a job listing →" }
                } }
            }
        }
    };
    Ok(page(&app, who.as_ref().map(|e| &e.0), "Webhooks", "/webhooks", body))
}
