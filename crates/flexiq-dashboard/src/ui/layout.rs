//! The frame every page shares: head, navigation, the CSRF token for the client script, and
//! small formatting helpers (times, statuses).

use maud::{html, Markup, DOCTYPE};

use crate::auth::guard::Principal;
use crate::state::Dashboard;

/// The navigation entries: path and label.
pub const NAV: [(&str, &str); 8] = [
    ("/", "Overview"),
    ("/queues", "Queues"),
    ("/jobs", "Jobs"),
    ("/dead-letters", "Dead letters"),
    ("/retention", "Retention"),
    ("/settings", "Settings"),
    ("/workers", "Workers"),
    ("/webhooks", "Webhooks"),
];

/// A full page titled `title`, with `active` the navigation path to highlight.
pub fn page(app: &Dashboard, who: Option<&Principal>, title: &str, active: &str, body: Markup) -> Markup {
    let csrf = who.and_then(Principal::csrf).unwrap_or_default();
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="csrf-token" content=(csrf);
                title { (title) " · flexiq" }
                link rel="stylesheet" href="/assets/app.css";
                script src="/assets/app.js" defer {}
            }
            body data-read-only=(app.config.read_only) {
                header {
                    span.brand { "flexiq" }
                    span.ns { (app.queue.backend()) " · " (app.queue.namespace()) }
                    nav {
                        @for (path, label) in NAV {
                            a href=(path) class=[(path == active).then_some("active")] { (label) }
                        }
                    }
                    @if app.config.read_only { span.badge { "read-only" } }
                    @if let Some(p) = who {
                        span.who { (p.who()) }
                        @if app.auth_required { button.link data-logout { "Log out" } }
                    }
                }
                main {
                    h1 { (title) }
                    div #flash role="status" {}
                    (body)
                }
            }
        }
    }
}

/// A Unix-ms timestamp as UTC text, with the raw value for the client to localise.
pub fn time(ms: Option<i64>) -> Markup {
    match ms {
        Some(ms) => html! { time data-ms=(ms) { (utc(ms)) } },
        None => html! { span.muted { "—" } },
    }
}

/// `YYYY-MM-DD HH:MM:SS` UTC of a Unix-ms timestamp.
pub fn utc(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(ts) => ts.strftime("%Y-%m-%d %H:%M:%S").to_string(),
        Err(_) => format!("{ms} ms"),
    }
}

/// A status as a coloured label.
pub fn status(s: &str) -> Markup {
    html! { span class={ "status s-" (s) } { (s) } }
}

/// A milliseconds duration for people (`850 ms`, `12.5 s`, `3.2 d`).
pub fn duration(ms: u64) -> String {
    let s = ms as f64 / 1000.0;
    match ms {
        0..=999 => format!("{ms} ms"),
        1_000..=59_999 => format!("{s:.1} s"),
        60_000..=3_599_999 => format!("{:.1} min", s / 60.0),
        3_600_000..=86_399_999 => format!("{:.1} h", s / 3600.0),
        _ => format!("{:.1} d", s / 86_400.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        assert_eq!(utc(1_709_210_096_000), "2024-02-29 12:34:56");
        assert_eq!(utc(-1_000), "1969-12-31 23:59:59");
    }

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(12_500), "12.5 s");
        assert_eq!(duration(7 * 86_400_000), "7.0 d");
    }
}
