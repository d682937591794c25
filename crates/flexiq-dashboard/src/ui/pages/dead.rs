//! Dead letters: triage by task, retry, delete, purge by task or by age.

use axum::extract::State;
use axum::Extension;
use maud::html;

use crate::api::dead::{dead_by_task, dead_page, DeadQuery};
use crate::auth::guard::Principal;
use crate::error::ApiQuery;
use crate::state::AppState;
use crate::ui::layout::{page, time};
use crate::ui::PageResult;

/// `GET /dead-letters`
pub async fn dead_letters(
    State(app): State<AppState>,
    who: Option<Extension<Principal>>,
    ApiQuery(q): ApiQuery<DeadQuery>,
) -> PageResult {
    let by_task = dead_by_task(&app).await?;
    let rows = dead_page(&app, &q).await?;
    let body = html! {
        h2 { "By task" }
        table.grid #dead-by-task {
            thead { tr { th { "task" } th { "dead letters" } th { "" } } }
            tbody { @for (task, n) in &by_task { tr {
                td { a href={ "/dead-letters?task=" (task) } { (task) } }
                td.num { (n) }
                td { button data-call="POST /api/v1/dead-letters/purge" data-body=(serde_json::json!({"task": task}))
                    data-confirm={ "Delete every dead letter of " (task) "?" } { "Purge task" } }
            } } }
        }
        @if by_task.is_empty() { p.muted { "No dead letters." } }
        form.inline data-api="POST" data-path="/api/v1/dead-letters/purge" data-field="older_than_secs" data-number
            data-confirm="Delete dead letters older than this?" {
            label { "Purge older than (seconds) " input name="older_than_secs" size="8" value="2592000"; }
            button { "Purge by age" }
        }
        h2 { @if let Some(t) = &q.task { "Dead letters of " (t) } @else { "Newest dead letters" } }
        table.grid #dead {
            thead { tr { th { "failed at" } th { "queue" } th { "task" } th { "attempts" } th { "error" } th { "" } } }
            tbody { @for d in &rows.items { tr data-dead=(d.id) {
                td { (time(Some(d.failed_at))) }
                td { (d.queue) } td { (d.task) } td.num { (d.retry_count) }
                td.err { (d.error.as_deref().unwrap_or("")) }
                td {
                    button data-call={ "POST /api/v1/dead-letters/" (d.id) "/retry" } { "Retry" }
                    " "
                    button data-call={ "DELETE /api/v1/dead-letters/" (d.id) } data-confirm="Delete this dead letter?" { "Delete" }
                }
            } } }
        }
        @if let Some(c) = &rows.next_cursor { a #next-page href={ "/dead-letters?after=" (c) } { "Next page →" } }
    };
    Ok(page(&app, who.as_ref().map(|e| &e.0), "Dead letters", "/dead-letters", body))
}
