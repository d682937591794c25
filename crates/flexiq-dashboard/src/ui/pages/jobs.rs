//! Jobs: the keyset-paged listing with its filters, and one job in full with its graph.

use axum::extract::{Path, State};
use axum::Extension;
use maud::{html, Markup};
use serde::Deserialize;

use crate::api::jobs::{job_dag, job_detail, jobs_page, JobsQuery};
use crate::api::model::{status_names, Bytes};
use crate::auth::guard::Principal;
use crate::error::{ApiError, ApiQuery, ApiResult};
use crate::state::AppState;
use crate::ui::layout::{page, status, time};
use crate::ui::svg::dag;
use crate::ui::PageResult;

/// The listing's filters as a browser form sends them: the API's, with the created-at range as
/// UTC date-times (`2026-12-05T14:30`) instead of Unix ms.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct JobsPageQuery {
    status: Option<String>,
    queue: Option<String>,
    task: Option<String>,
    metadata: Option<String>,
    error: Option<String>,
    created_from: Option<String>,
    created_to: Option<String>,
    limit: Option<i64>,
    after: Option<String>,
}

/// A UTC date-time from a form (`YYYY-MM-DDTHH:MM[:SS]`) as Unix ms.
fn utc_ms(what: &str, text: &Option<String>) -> ApiResult<Option<i64>> {
    let Some(t) = text.as_deref().map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let civil: jiff::civil::DateTime =
        t.parse().map_err(|e| ApiError::invalid(format!("{what} {t:?} is not a date-time: {e}")))?;
    let ts = jiff::tz::TimeZone::UTC
        .to_timestamp(civil)
        .map_err(|e| ApiError::invalid(format!("{what} {t:?} is out of range: {e}")))?;
    Ok(Some(ts.as_millisecond()))
}

impl JobsPageQuery {
    fn to_api(&self) -> ApiResult<JobsQuery> {
        Ok(JobsQuery {
            status: self.status.clone(),
            queue: self.queue.clone(),
            task: self.task.clone(),
            metadata: self.metadata.clone(),
            error: self.error.clone(),
            created_after: utc_ms("created from", &self.created_from)?,
            created_before: utc_ms("created to", &self.created_to)?,
            limit: self.limit,
            after: self.after.clone(),
        })
    }

    fn next_link(&self, cursor: &str) -> String {
        let mut parts = vec![("after", cursor.to_string())];
        for (k, v) in [
            ("status", &self.status),
            ("queue", &self.queue),
            ("task", &self.task),
            ("metadata", &self.metadata),
            ("error", &self.error),
            ("created_from", &self.created_from),
            ("created_to", &self.created_to),
        ] {
            if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                parts.push((k, v.to_string()));
            }
        }
        if let Some(l) = self.limit {
            parts.push(("limit", l.to_string()));
        }
        format!("/jobs?{}", serde_urlencoded::to_string(&parts).unwrap_or_default())
    }
}

/// `GET /jobs`
pub async fn jobs(
    State(app): State<AppState>,
    who: Option<Extension<Principal>>,
    ApiQuery(q): ApiQuery<JobsPageQuery>,
) -> PageResult {
    let page_rows = jobs_page(&app, &q.to_api()?).await?;
    let v = |o: &Option<String>| o.clone().unwrap_or_default();
    let body = html! {
        form.filters #job-filters method="get" action="/jobs" {
            label { "status" select name="status" {
                option value="" { "any" }
                @for s in status_names() { option value=(s) selected[q.status.as_deref() == Some(s)] { (s) } }
            } }
            label { "queue" input name="queue" value=(v(&q.queue)) size="10"; }
            label { "task" input name="task" value=(v(&q.task)) size="10"; }
            label { "metadata contains" input name="metadata" value=(v(&q.metadata)) size="10"; }
            label { "error contains" input name="error" value=(v(&q.error)) size="10"; }
            label { "created from (UTC)" input type="datetime-local" name="created_from" value=(v(&q.created_from)); }
            label { "created to (UTC)" input type="datetime-local" name="created_to" value=(v(&q.created_to)); }
            button type="submit" { "Filter" }
            a href="/jobs" { "clear" }
        }
        table.grid #jobs {
            thead { tr { th { "id" } th { "queue" } th { "task" } th { "status" } th { "attempt" }
                th { "created" } th { "last error" } } }
            tbody {
                @for j in &page_rows.items {
                    tr data-job=(j.id) {
                        td.mono { a href={ "/jobs/" (j.id) } { (j.id) } }
                        td { (j.queue) } td { (j.task) } td { (status(&j.status)) }
                        td.num { (j.attempt) "/" (j.max_retries + 1) }
                        td { (time(Some(j.created_at))) }
                        td.err { (j.last_error.as_deref().unwrap_or("")) }
                    }
                }
            }
        }
        @if page_rows.items.is_empty() { p.muted { "No job matches." } }
        nav.pager {
            span #page-size { (page_rows.items.len()) " jobs on this page" }
            @if let Some(c) = &page_rows.next_cursor { a #next-page href=(q.next_link(c)) { "Next page →" } }
        }
    };
    Ok(page(&app, who.as_ref().map(|e| &e.0), "Jobs", "/jobs", body))
}

fn bytes(b: &Bytes) -> Markup {
    html! {
        @match &b.text {
            Some(t) => pre { (t) },
            None => pre.muted { "(" (b.size) " bytes, base64) " (b.base64) },
        }
    }
}

/// `GET /jobs/{id}`
pub async fn job(
    State(app): State<AppState>,
    who: Option<Extension<Principal>>,
    Path(id): Path<String>,
) -> PageResult {
    let d = job_detail(&app, &id).await?;
    let graph = job_dag(&app, &id).await?;
    let j = &d.job;
    let s = &j.summary;
    let body = html! {
        div.actions {
            button data-call={ "POST /api/v1/jobs/" (s.id) "/replay" } data-go="/jobs/{job_id}" { "Replay" }
            button data-call={ "POST /api/v1/jobs/" (s.id) "/cancel" } { "Cancel" }
        }
        dl.fields {
            dt { "id" } dd.mono { (s.id) }
            dt { "status" } dd { (status(&s.status)) @if j.cancel_requested { " (cancel requested)" } }
            dt { "queue / task" } dd { (s.queue) " / " (s.task) }
            dt { "attempt" } dd { (s.attempt) " of " (s.max_retries + 1) }
            dt { "priority" } dd { (s.priority) }
            dt { "created" } dd { (time(Some(s.created_at))) }
            dt { "run at" } dd { (time(Some(s.run_at))) }
            dt { "started" } dd { (time(j.started_at)) }
            dt { "heartbeat" } dd { (time(j.heartbeat_at)) }
            dt { "finished" } dd { (time(s.finished_at)) }
            dt { "worker" } dd { (j.worker_id.as_deref().unwrap_or("—")) }
            dt { "progress" } dd { @match s.progress {
                Some(p) => { progress max="100" value=(p) {} " " (p) "%" },
                None => { "—" },
            } }
            dt { "unique key" } dd { (j.unique_key.as_deref().unwrap_or("—")) }
            dt { "metadata" } dd.mono { (j.metadata.as_deref().unwrap_or("—")) }
            dt { "last error" } dd.err { (s.last_error.as_deref().unwrap_or("—")) }
        }
        h2 { "Payload" } (bytes(&j.payload))
        h2 { "Result" }
        @match &j.result { Some(r) => { (bytes(r)) }, None => { p.muted { "No result." } } }
        h2 { "Attempts and errors" }
        @if d.errors.is_empty() { p.muted { "No failed attempt." } } @else {
            table.grid #errors { thead { tr { th { "attempt" } th { "failed at" } th { "error" } } }
                tbody { @for e in &d.errors { tr { td.num { (e.attempt) } td { (time(Some(e.failed_at))) } td.err { (e.error) } } } } }
        }
        h2 { "Logs" }
        @if d.logs.is_empty() { p.muted { "No log lines." } } @else {
            table.grid #logs { tbody { @for l in &d.logs { tr { td { (time(Some(l.logged_at))) } td { (l.level) } td { (l.message) } } } } }
        }
        h2 { "Partial results" }
        @if d.partials.is_empty() { p.muted { "None published." } } @else {
            ol { @for p in &d.partials { li { (bytes(&p.data)) } } }
        }
        h2 { "Dependencies" }
        @if graph.edges.is_empty() { p.muted { "No dependencies." } }
        div.dag-wrap { (dag(&graph, &s.id)) }
    };
    Ok(page(&app, who.as_ref().map(|e| &e.0), &format!("Job {}", s.task), "/jobs", body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_dates_are_utc_milliseconds() {
        assert_eq!(utc_ms("x", &Some("2024-02-29T12:34".into())).unwrap(), Some(1_709_210_040_000));
        assert_eq!(utc_ms("x", &Some("".into())).unwrap(), None);
        assert_eq!(utc_ms("x", &Some("yesterday".into())).unwrap_err().code, "invalid_argument");
    }

    #[test]
    fn next_link_keeps_the_filters() {
        let q = JobsPageQuery {
            queue: Some("a b".into()),
            created_from: Some("2024-01-01T00:00".into()),
            ..Default::default()
        };
        let link = q.next_link("CUR");
        assert!(link.starts_with("/jobs?after=CUR"), "{link}");
        assert!(link.contains("queue=a+b") && link.contains("created_from=2024-01-01T00%3A00"), "{link}");
    }
}
