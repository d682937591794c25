//! Retention (effective windows and a dry-run preview), settings and workers.

use axum::extract::State;
use axum::Extension;
use maud::html;

use crate::api::admin::{retention_view, visible_settings, workers as list_workers, PreviewQuery};
use crate::auth::guard::Principal;
use crate::error::ApiQuery;
use crate::state::AppState;
use crate::ui::layout::{duration, page, time};
use crate::ui::PageResult;

/// `GET /retention`
pub async fn retention(
    State(app): State<AppState>,
    who: Option<Extension<Principal>>,
    ApiQuery(q): ApiQuery<PreviewQuery>,
) -> PageResult {
    let r = retention_view(&app, &q).await?;
    let window = |w: Option<u64>| w.map(duration).unwrap_or_else(|| "kept forever".to_string());
    let body = html! {
        h2 { "Applied by the cleaner" }
        @match &r.effective {
            None => { p.muted { "No worker has swept this namespace yet." } },
            Some(eff) => {
                p { "Reported " (time(r.reported_at)) }
                table.grid #effective { tbody { @for (t, w) in eff { tr { td { (t) } td { (window(*w)) } } } } }
            },
        }
        h2 { "Dry run" @if r.preview_defaulted { " (recommended windows)" } }
        table.grid #preview {
            thead { tr { th { "table" } th { "window" } th { "would delete now" } } }
            tbody { @for (t, w) in &r.preview_windows { tr {
                td { (t) } td { (window(*w)) } td.num { (r.would_delete.get(t).copied().unwrap_or(0)) }
            } } }
            tfoot { tr { td { "total" } td {} td.num { (r.total) } } }
        }
        form.filters method="get" action="/retention" {
            "Preview other windows (seconds): "
            @for t in ["archived_jobs", "dead_letter", "task_logs", "task_metrics", "job_errors"] {
                label { (t) input name=(t) size="8"; }
            }
            button type="submit" { "Preview" }
        }
    };
    Ok(page(&app, who.as_ref().map(|e| &e.0), "Retention", "/retention", body))
}

/// `GET /settings`
pub async fn settings(State(app): State<AppState>, who: Option<Extension<Principal>>) -> PageResult {
    let all = visible_settings(&app).await?;
    let body = html! {
        p.muted { "Keys under the runtime's reserved prefixes (" (flexiq::core::reserved_setting_prefixes().join(" "))
            ") are hidden and cannot be written here." }
        table.grid #settings {
            thead { tr { th { "key" } th { "value" } th { "" } } }
            tbody { @for s in &all { tr {
                td.mono { (s.key) } td.mono { (s.value) }
                td { button data-call={ "DELETE /api/v1/settings/" (s.key) } data-confirm={ "Delete " (s.key) "?" } { "Delete" } }
            } } }
        }
        form.inline #setting-form data-setting {
            input name="key" placeholder="key" required;
            input name="value" placeholder="value";
            button { "Set" }
        }
    };
    Ok(page(&app, who.as_ref().map(|e| &e.0), "Settings", "/settings", body))
}

/// `GET /workers`
pub async fn workers(State(app): State<AppState>, who: Option<Extension<Principal>>) -> PageResult {
    let all = list_workers(&app).await?;
    let now = app.queue.now_ms();
    let body = html! {
        table.grid #workers {
            thead { tr { th { "worker" } th { "host / pid" } th { "queues" } th { "concurrency" }
                th { "started" } th { "last heartbeat" } th { "running now" } } }
            tbody { @for w in &all { tr {
                td.mono { (w.id) } td { (w.host) " / " (w.pid) }
                td { @if w.queues.is_empty() { "all" } @else { (w.queues.join(", ")) } }
                td.num { (w.concurrency) }
                td { (time(Some(w.started_at))) }
                td { (duration(u64::try_from(now - w.heartbeat_at).unwrap_or(0))) " ago" }
                td { @for j in &w.current_jobs { a.mono href={ "/jobs/" (j) } { "…" (&j[j.len().saturating_sub(8)..]) } " " } }
            } } }
        }
        @if all.is_empty() { p.muted { "No worker registered." } }
    };
    Ok(page(&app, who.as_ref().map(|e| &e.0), "Workers", "/workers", body))
}
