//! Webhooks: each hook's target and filters, its latest deliveries linked to their jobs, and
//! forms to create, edit and delete hooks.
//!
//! The forms are handled like every other control on the pages: the client script turns the
//! fields into the body of `PUT /api/v1/webhooks/{name}` (or `DELETE`) and sends it with the
//! session's CSRF token, so a form write passes the same guard (read-only refusal, CSRF,
//! audit record) and the same validation as an API call, and a refusal is shown on the page
//! with nothing written. The create form sends `If-None-Match: *` so it cannot overwrite a
//! hook of the same name. Secrets are never rendered: the edit form's secret field starts
//! empty, and left empty keeps the stored secrets.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Extension;
use flexiq::webhooks::config::{DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SECS, MAX_HOOK_NAME_BYTES};
use flexiq::webhooks::QUEUE;
use maud::{html, Markup};

use crate::api::webhooks::{delivery_page, hooks, DeliveriesQuery, DeliveryPage, WebhookView};
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

/// The create form (no hook) or the edit form of hook `existing`, prefilled with its values
/// when it parses. Field names are the JSON body's (`assets/app.js` reads them).
fn hook_form(existing: Option<&WebhookView>) -> Markup {
    let valid = existing.filter(|h| h.error.is_none());
    let name_pattern = format!("[A-Za-z0-9._\\-]{{1,{MAX_HOOK_NAME_BYTES}}}");
    html! {
        form.hook-form data-webhook-form=(if existing.is_some() { "edit" } else { "create" })
            data-hook=[existing.map(|h| h.name.as_str())] {
            @match existing {
                Some(h) => { input type="hidden" name="name" value=(h.name); },
                None => { label { "name" input name="name" required pattern=(name_pattern) placeholder="orders" size="12"; } },
            }
            label { "url" input name="url" required size="36" placeholder="https://hooks.example.com/flexiq"
                value=[valid.map(|h| h.url.as_str())]; }
            label { "events (comma-separated; empty: every event)"
                input name="events" size="22" placeholder="completed, dead" value=[valid.map(|h| h.events.join(", "))]; }
            label { "namespaces (empty: every namespace)"
                input name="namespaces" size="14" value=[valid.map(|h| h.namespaces.join(", "))]; }
            @if existing.is_some() {
                label { "new secret (empty: keep the current ones)"
                    input type="password" name="secret" autocomplete="new-password" size="18"; }
                label.check { input type="checkbox" name="rotate" checked;
                    "rotate: keep the newest current secret valid beside the new one" }
            } @else {
                label { "secret (at least 16 bytes)"
                    input type="password" name="secret" autocomplete="new-password" required size="18"; }
            }
            label.check { input type="checkbox" name="allow_private" checked[valid.is_some_and(|h| h.allow_private)];
                "allow loopback and private-network targets" }
            label { "retries" input type="number" name="max_retries" min="0" size="4"
                value=(valid.map_or(DEFAULT_MAX_RETRIES, |h| h.max_retries)); }
            label { "timeout (s)" input type="number" name="timeout_secs" min="1" max="300" size="4"
                value=(valid.map_or(DEFAULT_TIMEOUT_SECS, |h| h.timeout_secs)); }
            button type="submit" { @if existing.is_some() { "Save" } @else { "Create" } }
            output.form-error {}
        }
    }
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
            p.muted { "No webhooks yet: create one below (or with " code { "PUT /api/v1/webhooks/{name}" } ")." }
        }
        h2 { "New webhook" }
        (hook_form(None))
        @for (h, log) in hooks.iter().zip(&logs) {
            h2 id={ "hook-" (h.name) } { (h.name) }
            details.hook-edit {
                summary { "Edit " (h.name) }
                (hook_form(Some(h)))
            }
            @if let Some(log) = log {
                h3 { "Latest deliveries of " (h.name) }
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
