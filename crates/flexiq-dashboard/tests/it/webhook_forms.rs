//! The `/webhooks` page's forms on every store: what they render (prefilled from the stored
//! hook, never a secret) and the writes they make, sent as a browser session does (the
//! session cookie and the CSRF token read from the page, the body built from the form's
//! fields as `assets/app.js` builds it): create, a create that would overwrite, edit keeping
//! the secrets, a rotation, delete, a malformed URL and a private target refused with nothing
//! written, writes without the CSRF token or on a read-only server refused, and every
//! accepted write on the audit record.

use flexiq::webhooks::get_hook;
use flexiq_dashboard::DashboardConfig;
use reqwest::Method;
use serde_json::{json, Value};

use crate::fixture::{browser, code, on_postgres, on_redis, on_sqlite, open, start};

const SECRET: &str = "form-secret-0123456789";
const NEXT_SECRET: &str = "form-secret-next-0123456789";
const HOOK_URL: &str = "http://127.0.0.1:9/form-hook";

/// The page at `url`, which must answer 200.
async fn page(b: &reqwest::Client, url: &str) -> String {
    let r = b.get(url).send().await.unwrap();
    assert_eq!(r.status(), 200, "{url}");
    r.text().await.unwrap()
}

/// The CSRF token a page carries for its script.
fn csrf_of(html: &str) -> String {
    let marker = "name=\"csrf-token\" content=\"";
    let start = html.find(marker).expect("the page carries a csrf token") + marker.len();
    let token = &html[start..start + html[start..].find('"').unwrap()];
    assert!(!token.is_empty(), "the session's csrf token is on the page");
    token.to_string()
}

/// The body the script sends for a form with these fields (`secret` empty: left out).
fn form_body(url: &str, events: &str, secret: &str, allow_private: bool, rotate: bool) -> Value {
    let list: Vec<&str> = events.split(',').map(str::trim).filter(|e| !e.is_empty()).collect();
    let mut body = json!({
        "url": url, "events": list, "namespaces": [], "allow_private": allow_private,
        "max_retries": 3, "timeout_secs": 10
    });
    if !secret.is_empty() {
        body["secrets"] = json!([secret]);
        if rotate {
            body["rotate"] = json!(true);
        }
    }
    body
}

/// Submits a webhook form for hook `name` as the page's script does.
async fn submit(
    b: &reqwest::Client,
    base: &str,
    csrf: Option<&str>,
    name: &str,
    create: bool,
    body: &Value,
) -> reqwest::Response {
    let mut req = b.request(Method::PUT, format!("{base}/api/v1/webhooks/{name}")).json(body);
    if let Some(token) = csrf {
        req = req.header("x-csrf-token", token);
    }
    if create {
        req = req.header("if-none-match", "*");
    }
    req.send().await.unwrap()
}

async fn suite(url: String) {
    let run = start(open(&url).await, DashboardConfig::default()).await;
    let b = browser();
    let html = page(&b, &run.url("/webhooks")).await;
    let csrf = csrf_of(&html);
    assert!(html.contains("data-webhook-form=\"create\""), "the page has a create form");
    for field in
        ["name", "url", "events", "namespaces", "secret", "allow_private", "max_retries", "timeout_secs"]
    {
        assert!(html.contains(&format!("name=\"{field}\"")), "the create form has a {field} field");
    }
    let base = run.base.clone();

    // Create.
    let created = form_body(HOOK_URL, "completed, dead", SECRET, true, false);
    let r = submit(&b, &base, Some(&csrf), "orders", true, &created).await;
    let status = r.status();
    assert_eq!(status, 200, "{}", r.text().await.unwrap());
    let stored = get_hook(&run.queue, "orders").await.unwrap().expect("the form created the hook");
    assert_eq!((stored.url.as_str(), stored.allow_private, stored.max_retries), (HOOK_URL, true, 3));
    assert_eq!(stored.events, vec!["completed".to_string(), "dead".to_string()]);
    assert_eq!(stored.secrets, vec![SECRET.to_string()]);
    let html = page(&b, &run.url("/webhooks")).await;
    assert!(html.contains("<tr data-webhook=\"orders\""), "the hook is listed");
    let edit = &html[html.find("data-hook=\"orders\"").expect("an edit form for the hook")..];
    let edit = &edit[..edit.find("</form>").unwrap()];
    assert!(edit.contains(&format!("value=\"{HOOK_URL}\"")), "the url is prefilled: {edit}");
    assert!(edit.contains("name=\"max_retries\"") && edit.contains("value=\"3\""), "{edit}");
    assert!(edit.contains("value=\"completed, dead\""), "the filter is prefilled: {edit}");
    assert!(edit.contains("name=\"allow_private\" checked"), "{edit}");
    assert!(!html.contains(SECRET), "the page never shows a secret");

    // The create form never overwrites a hook of the same name.
    let other = form_body("http://127.0.0.1:9/other", "", SECRET, true, false);
    let r = submit(&b, &base, Some(&csrf), "orders", true, &other).await;
    assert_eq!(code(r).await, (412, "precondition_failed".into()));
    assert_eq!(get_hook(&run.queue, "orders").await.unwrap().unwrap().url, HOOK_URL);

    // Edit with the secret left empty: the stored secret is kept.
    let moved = form_body("http://127.0.0.1:9/moved", "dead", "", true, false);
    let r = submit(&b, &base, Some(&csrf), "orders", false, &moved).await;
    assert_eq!(r.status(), 200);
    let kept = get_hook(&run.queue, "orders").await.unwrap().unwrap();
    assert_eq!(
        (kept.url.as_str(), kept.secrets.clone()),
        ("http://127.0.0.1:9/moved", vec![SECRET.to_string()])
    );
    assert_eq!(kept.events, vec!["dead".to_string()]);

    // A new secret with "rotate" starts a rotation; saved again without it, the old one goes.
    let rotate = form_body("http://127.0.0.1:9/moved", "dead", NEXT_SECRET, true, true);
    let r = submit(&b, &base, Some(&csrf), "orders", false, &rotate).await;
    assert_eq!(r.status(), 200);
    let rotating = get_hook(&run.queue, "orders").await.unwrap().unwrap();
    assert_eq!(rotating.secrets, vec![SECRET.to_string(), NEXT_SECRET.to_string()]);
    let html = page(&b, &run.url("/webhooks")).await;
    assert!(!html.contains(SECRET) && !html.contains(NEXT_SECRET), "no secret on the page while rotating");
    let r = submit(&b, &base, Some(&csrf), "orders", false, &rotate).await;
    assert_eq!(code(r).await, (400, "invalid_argument".into()), "rotating to the current secret is refused");
    let finish = form_body("http://127.0.0.1:9/moved", "dead", NEXT_SECRET, true, false);
    assert_eq!(submit(&b, &base, Some(&csrf), "orders", false, &finish).await.status(), 200);
    assert_eq!(get_hook(&run.queue, "orders").await.unwrap().unwrap().secrets, vec![NEXT_SECRET.to_string()]);

    // Bad input: an error naming the problem, nothing written.
    for (body, names) in [
        (form_body("not a url", "", SECRET, true, false), "url"),
        (form_body("http://127.0.0.1:9/in", "", SECRET, false, false), "allow_private"),
        (form_body("http://localhost:9/in", "", SECRET, false, false), "allow_private"),
        (form_body(HOOK_URL, "", "short", true, false), "16 bytes"),
    ] {
        let r = submit(&b, &base, Some(&csrf), "bad", true, &body).await;
        assert_eq!(r.status(), 400, "{body}");
        let e: Value = r.json().await.unwrap();
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.contains("webhook bad") && message.contains(names), "{body}: {message}");
        assert!(get_hook(&run.queue, "bad").await.unwrap().is_none(), "nothing written for {body}");
    }
    assert!(!page(&b, &run.url("/webhooks")).await.contains("data-webhook=\"bad\""));

    // A rotation takes exactly one new secret, for a hook that exists; refused, it writes nothing.
    let moved_url = "http://127.0.0.1:9/moved";
    for (name, body, says) in [
        (
            "orders",
            json!({"url": moved_url, "secrets": [SECRET, NEXT_SECRET], "rotate": true, "allow_private": true}),
            "exactly one",
        ),
        ("orders", json!({"url": moved_url, "rotate": true, "allow_private": true}), "needs the new secret"),
        ("bad", form_body(HOOK_URL, "", SECRET, true, true), "existing hook"),
    ] {
        let r = submit(&b, &base, Some(&csrf), name, false, &body).await;
        assert_eq!(r.status(), 400, "{body}");
        let e: Value = r.json().await.unwrap();
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("webhook {name}")) && message.contains(says), "{body}: {message}");
    }
    assert_eq!(get_hook(&run.queue, "orders").await.unwrap().unwrap().secrets, vec![NEXT_SECRET.to_string()]);
    assert!(get_hook(&run.queue, "bad").await.unwrap().is_none());

    // Delete.
    let r = b.delete(run.url("/api/v1/webhooks/orders")).header("x-csrf-token", &csrf).send().await.unwrap();
    assert_eq!(r.status(), 204);
    assert!(get_hook(&run.queue, "orders").await.unwrap().is_none());
    assert!(page(&b, &run.url("/webhooks")).await.contains("No webhooks"));

    // Each accepted form write is on the audit record, as the session's visitor.
    let events: Value =
        b.get(run.url("/api/v1/events?limit=1000")).send().await.unwrap().json().await.unwrap();
    let written: Vec<(String, String)> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "dashboard.write")
        .map(|e| {
            assert_eq!(e["data"]["who"], "anonymous", "{e}");
            (e["data"]["method"].as_str().unwrap().into(), e["data"]["path"].as_str().unwrap().into())
        })
        .collect();
    let orders = "/api/v1/webhooks/orders".to_string();
    let put = ("PUT".to_string(), orders.clone());
    assert_eq!(written, vec![put.clone(), put.clone(), put.clone(), put, ("DELETE".into(), orders)]);
    run.stop().await;
}

/// Writes without the session's CSRF token, or on a read-only server, are refused with their
/// typed errors and change nothing.
async fn refusals(url: String) {
    let run = start(open(&url).await, DashboardConfig::default()).await;
    let b = browser();
    let csrf = csrf_of(&page(&b, &run.url("/webhooks")).await);
    let body = form_body(HOOK_URL, "", SECRET, true, false);
    for token in [None, Some("not-the-token")] {
        let r = submit(&b, &run.base, token, "orders", true, &body).await;
        assert_eq!(code(r).await, (403, "csrf".into()), "{token:?}");
    }
    assert!(get_hook(&run.queue, "orders").await.unwrap().is_none(), "nothing written without the token");
    assert_eq!(submit(&b, &run.base, Some(&csrf), "orders", true, &body).await.status(), 200);
    let r = b.delete(run.url("/api/v1/webhooks/orders")).send().await.unwrap();
    assert_eq!(code(r).await, (403, "csrf".into()));
    assert!(get_hook(&run.queue, "orders").await.unwrap().is_some(), "not deleted without the token");

    // The same store behind a read-only server: the forms are shown, their writes refused.
    let ro = start(run.queue.clone(), DashboardConfig { read_only: true, ..Default::default() }).await;
    let rb = browser();
    let html = page(&rb, &ro.url("/webhooks")).await;
    assert!(html.contains("data-webhook-form=\"create\"") && html.contains("data-hook=\"orders\""));
    let csrf = csrf_of(&html);
    let edit = form_body("http://127.0.0.1:9/elsewhere", "", "", true, false);
    let r = submit(&rb, &ro.base, Some(&csrf), "orders", false, &edit).await;
    assert_eq!(code(r).await, (403, "read_only".into()));
    let r = submit(&rb, &ro.base, Some(&csrf), "fresh", true, &body).await;
    assert_eq!(code(r).await, (403, "read_only".into()));
    let r = rb.delete(ro.url("/api/v1/webhooks/orders")).header("x-csrf-token", &csrf).send().await.unwrap();
    assert_eq!(code(r).await, (403, "read_only".into()));
    assert_eq!(get_hook(&run.queue, "orders").await.unwrap().unwrap().url, HOOK_URL, "unchanged");
    assert!(get_hook(&run.queue, "fresh").await.unwrap().is_none());
    ro.server.shutdown().await.expect("read-only server stops");
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_forms_on_sqlite() {
    on_sqlite(suite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_forms_on_postgres() {
    on_postgres(suite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_forms_on_redis() {
    on_redis(suite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_form_writes_are_refused_without_csrf_and_read_only_on_sqlite() {
    on_sqlite(refusals).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_form_writes_are_refused_without_csrf_and_read_only_on_postgres() {
    on_postgres(refusals).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_form_writes_are_refused_without_csrf_and_read_only_on_redis() {
    on_redis(refusals).await;
}
