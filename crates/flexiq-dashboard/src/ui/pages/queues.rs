//! Queues: counts (live), pause / resume, rate limit and concurrency per queue.

use axum::extract::State;
use axum::Extension;
use maud::html;

use crate::api::model::{QueueControls, StatusCounts};
use crate::auth::guard::Principal;
use crate::state::AppState;
use crate::ui::layout::page;
use crate::ui::PageResult;

/// `GET /queues`
pub async fn queues(State(app): State<AppState>, who: Option<Extension<Principal>>) -> PageResult {
    let q = &app.queue;
    let mut rows = Vec::new();
    for (name, st) in q.stats_all_queues().await? {
        let controls: QueueControls = q.queue_config(&name).await?.into();
        rows.push((name, StatusCounts::from(st), controls));
    }
    let body = html! {
        table.grid #queues {
            thead { tr {
                th { "queue" } th { "state" } th { "backlog (pending)" } th { "running" } th { "waiting" }
                th { "dead" } th { "rate limit" } th { "concurrency" } th { "" }
            } }
            tbody {
                @for (name, c, ctl) in &rows {
                    tr data-queue=(name) {
                        td { a href={ "/jobs?queue=" (name) } { (name) } }
                        td { @if ctl.paused { span.status.s-paused data-paused="true" { "paused" } }
                             @else { span.status.s-running data-paused="false" { "active" } } }
                        td.num data-count={ (name) ":pending" } { (c.pending) }
                        td.num data-count={ (name) ":running" } { (c.running) }
                        td.num data-count={ (name) ":waiting" } { (c.waiting) }
                        td.num data-count={ (name) ":dead" } { (c.dead) }
                        td {
                            form.inline data-api="PUT" data-path={ "/api/v1/queues/" (name) "/rate-limit" } data-field="rate_limit" {
                                input name="rate_limit" placeholder="none, or 10/s" value=[ctl.rate_limit.as_deref()] size="8";
                                button { "Set" }
                            }
                        }
                        td {
                            form.inline data-api="PUT" data-path={ "/api/v1/queues/" (name) "/concurrency" } data-field="concurrency" data-number {
                                input name="concurrency" placeholder="no cap" value=[ctl.concurrency] size="5";
                                button { "Set" }
                            }
                        }
                        td {
                            @if ctl.paused {
                                button data-call={ "POST /api/v1/queues/" (name) "/resume" } { "Resume" }
                            } @else {
                                button data-call={ "POST /api/v1/queues/" (name) "/pause" } { "Pause" }
                            }
                        }
                    }
                }
            }
        }
        @if rows.is_empty() { p.muted { "No queues yet." } }
        p.muted { "An empty rate limit or concurrency removes it. Max pending is a producer's connection option (";
            code { "max_pending" } "), not a stored control: this dashboard enqueues under "
            @match q.max_pending() { Some(n) => { (n) }, None => { "no cap" } } "." }
    };
    Ok(page(&app, who.as_ref().map(|e| &e.0), "Queues", "/queues", body))
}
