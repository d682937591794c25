//! The overview: counts by status and by queue (live), and throughput, failure and latency
//! charts of the last hour from the task metrics.

use axum::extract::State;
use axum::Extension;
use flexiq::JobStatus;
use maud::html;

use crate::api::metrics::{timeseries, MetricsQuery};
use crate::api::model::StatusCounts;
use crate::auth::guard::Principal;
use crate::state::AppState;
use crate::ui::layout::{page, status};
use crate::ui::svg::{latency_chart, throughput_chart, Axis};
use crate::ui::PageResult;

/// The count of `s` in `c`.
pub fn count(c: &StatusCounts, s: JobStatus) -> u64 {
    match s {
        JobStatus::Pending => c.pending,
        JobStatus::Running => c.running,
        JobStatus::Completed => c.completed,
        JobStatus::Failed => c.failed,
        JobStatus::Dead => c.dead,
        JobStatus::Cancelled => c.cancelled,
        JobStatus::Suspended => c.suspended,
        JobStatus::Waiting => c.waiting,
    }
}

/// `GET /`
pub async fn overview(State(app): State<AppState>, who: Option<Extension<Principal>>) -> PageResult {
    let q = &app.queue;
    let total: StatusCounts = q.stats().await?.into();
    let by_queue = q.stats_all_queues().await?;
    let buckets =
        timeseries(&app, &MetricsQuery { since_secs: Some(3_600), bucket_secs: Some(60), task: None })
            .await?;
    let axis = Axis::ending_at(q.now_ms(), 3_600_000, 60_000);
    let body = html! {
        section.cards {
            @for s in JobStatus::ALL {
                a.card href={ "/jobs?status=" (s.as_str()) } {
                    span.label { (status(s.as_str())) }
                    span.num data-count={ "*:" (s.as_str()) } { (count(&total, s)) }
                }
            }
            div.card { span.label { "total" } span.num data-count="*:total" { (total.total) } }
        }
        h2 { "Queues" }
        table.grid #queue-counts {
            thead { tr { th { "queue" } @for s in JobStatus::ALL { th { (s.as_str()) } } th { "total" } } }
            tbody {
                @for (name, st) in &by_queue {
                    @let c = StatusCounts::from(*st);
                    tr {
                        td { a href={ "/jobs?queue=" (name) } { (name) } }
                        @for s in JobStatus::ALL {
                            td.num data-count={ (name) ":" (s.as_str()) } { (count(&c, s)) }
                        }
                        td.num data-count={ (name) ":total" } { (c.total) }
                    }
                }
            }
        }
        @if by_queue.is_empty() { p.muted { "No queues yet." } }
        h2 { "Throughput and failures (last hour, per minute)" }
        (throughput_chart(&buckets, axis))
        h2 { "Latency (last hour, per minute)" }
        (latency_chart(&buckets, axis))
    };
    Ok(page(&app, who.as_ref().map(|e| &e.0), "Overview", "/", body))
}
