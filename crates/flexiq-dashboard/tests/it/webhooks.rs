//! Webhooks through the dashboard on every store: hooks created, listed without their secrets
//! and deleted through the runtime's validation, a hook's delivery log with a delivery the
//! dispatcher enqueued, typed errors for bad input, writes refused on a read-only server or
//! without the session's CSRF token, and the page.

use flexiq::webhooks::{get_hook, DispatchConfig, WebhookDispatcher, DELIVER_TASK};
use flexiq::EnqueueOptions;
use flexiq_dashboard::{auth, DashboardConfig};
use reqwest::Method;
use serde_json::{json, Value};

use crate::fixture::{browser, code, on_postgres, on_redis, on_sqlite, open, start};

const SECRET: &str = "a-secret-of-16-bytes-or-more";

fn hook_body() -> Value {
    json!({
        "url": "http://127.0.0.1:9/hook",
        "events": ["enqueued"],
        "secrets": [SECRET],
        "allow_private": true,
        "max_retries": 3
    })
}

async fn suite(url: String) {
    let q = open(&url).await;
    let token = auth::create_token(&q, "hooks").await.unwrap().token;
    let run = start(q, DashboardConfig::default()).await;
    let http = reqwest::Client::new();
    let req = |m: Method, path: &str| http.request(m, run.url(path)).bearer_auth(&token);
    let get = |path: &'static str| {
        let r = req(Method::GET, path);
        async move {
            let r = r.send().await.unwrap();
            assert_eq!(r.status(), 200, "GET {path}");
            r.json::<Value>().await.unwrap()
        }
    };

    assert_eq!(get("/api/v1/webhooks").await, json!([]), "no hooks yet");

    // Create: stored through the runtime, shown without the secret.
    let r = req(Method::PUT, "/api/v1/webhooks/orders").json(&hook_body()).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let created: Value = r.json().await.unwrap();
    assert_eq!((created["name"].as_str(), created["secrets"].as_u64()), (Some("orders"), Some(1)));
    let stored = get_hook(&run.queue, "orders").await.unwrap().expect("hook stored");
    assert_eq!(stored.url, "http://127.0.0.1:9/hook");
    assert_eq!((stored.allow_private, stored.max_retries, stored.timeout_secs), (true, 3, 10));
    assert_eq!(stored.events, vec!["enqueued".to_string()]);
    assert_eq!(stored.secrets, vec![SECRET.to_string()]);
    let listed = get("/api/v1/webhooks").await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["allow_private"], true);
    assert_eq!(listed[0]["secret_fingerprints"].as_array().unwrap().len(), 1);
    assert!(!listed.to_string().contains(SECRET), "the secret never leaves the server: {listed}");
    assert_eq!(get("/api/v1/webhooks/orders").await, listed[0]);
    let r = req(Method::GET, "/api/v1/webhooks/nobody").send().await.unwrap();
    assert_eq!(code(r).await, (404, "not_found".into()));

    // Replacing without secrets keeps the stored ones; a new hook without secrets is refused.
    let mut no_secrets = hook_body();
    no_secrets.as_object_mut().unwrap().remove("secrets");
    no_secrets["max_retries"] = json!(5);
    let r = req(Method::PUT, "/api/v1/webhooks/orders").json(&no_secrets).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let kept = get_hook(&run.queue, "orders").await.unwrap().unwrap();
    assert_eq!((kept.max_retries, kept.secrets), (5, vec![SECRET.to_string()]));
    let r = req(Method::PUT, "/api/v1/webhooks/fresh").json(&no_secrets).send().await.unwrap();
    assert_eq!(code(r).await, (400, "invalid_argument".into()));

    // Bad bodies: 400 naming the field.
    for (patch, field) in [
        (json!({"url": "ftp://example.com/x"}), "url"),
        (json!({"secrets": ["short"]}), "secret"),
        (json!({"timeout_secs": 0}), "timeout_secs"),
        (json!({"events": [""]}), "events"),
        (json!({"typo": 1}), "typo"),
    ] {
        let mut body = hook_body();
        for (k, v) in patch.as_object().unwrap() {
            body[k] = v.clone();
        }
        let r = req(Method::PUT, "/api/v1/webhooks/bad").json(&body).send().await.unwrap();
        assert_eq!(r.status(), 400, "{patch}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"]["code"], "invalid_argument", "{e}");
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.contains(field), "{patch}: {message} names {field}");
    }
    let r = req(Method::PUT, "/api/v1/webhooks/bad%20name").json(&hook_body()).send().await.unwrap();
    assert_eq!(code(r).await, (400, "invalid_argument".into()));
    assert!(get_hook(&run.queue, "bad").await.unwrap().is_none(), "nothing stored by a refused write");

    // A delivery: the dispatcher starts after the newest event, then turns one enqueue into one
    // delivery job (no worker runs it).
    let dispatcher = WebhookDispatcher::new(&run.queue, DispatchConfig::default()).unwrap();
    dispatcher.run_once().await.unwrap();
    let subject = run.queue.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap().to_string();
    let report = dispatcher.run_once().await.unwrap();
    assert_eq!(report.deliveries, 1, "{report:?}");

    let log = get("/api/v1/webhooks/orders/deliveries").await;
    let items = log["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{log}");
    let d = &items[0];
    assert_eq!((d["event"].as_str(), d["status"].as_str()), (Some("enqueued"), Some("pending")), "{d}");
    assert_eq!(d["event_job_id"].as_str(), Some(subject.as_str()));
    assert_eq!(d["url"], "http://127.0.0.1:9/hook");
    let job_id = d["job_id"].as_str().unwrap().to_string();
    let job = run.queue.get_job(&job_id).await.unwrap().expect("delivery job");
    assert_eq!(job.task, DELIVER_TASK);
    assert_eq!(get("/api/v1/webhooks/orders/deliveries?status=completed").await["items"], json!([]));

    // Keyset paging: a page of one with a second delivery behind it.
    run.queue.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert_eq!(dispatcher.run_once().await.unwrap().deliveries, 1);
    let first = get("/api/v1/webhooks/orders/deliveries?limit=1").await;
    let cursor = first["next_cursor"].as_str().expect("a second page").to_string();
    let r = req(Method::GET, &format!("/api/v1/webhooks/orders/deliveries?limit=1&after={cursor}"))
        .send()
        .await
        .unwrap();
    let second: Value = r.json().await.unwrap();
    assert_eq!(second["items"].as_array().unwrap().len(), 1, "{second}");
    assert_ne!(second["items"][0]["job_id"], first["items"][0]["job_id"]);

    // Typed errors.
    for (path, status, c) in [
        ("/api/v1/webhooks/nobody/deliveries", 404, "not_found"),
        ("/api/v1/webhooks/orders/deliveries?after=garbage", 400, "invalid_argument"),
        ("/api/v1/webhooks/orders/deliveries?limit=0", 400, "invalid_argument"),
        ("/api/v1/webhooks/orders/deliveries?limit=many", 400, "invalid_argument"),
        ("/api/v1/webhooks/orders/deliveries?status=lost", 400, "invalid_argument"),
    ] {
        let r = req(Method::GET, path).send().await.unwrap();
        assert_eq!(code(r).await, (status, c.to_string()), "{path}");
    }

    // Delete: 204, then 404.
    let r = req(Method::DELETE, "/api/v1/webhooks/orders").send().await.unwrap();
    assert_eq!(r.status(), 204);
    assert!(get_hook(&run.queue, "orders").await.unwrap().is_none());
    let r = req(Method::DELETE, "/api/v1/webhooks/orders").send().await.unwrap();
    assert_eq!(code(r).await, (404, "not_found".into()));
    assert_eq!(get("/api/v1/webhooks").await, json!([]));

    // Every successful webhook write is on the audit record, and only those.
    let events = get("/api/v1/events?limit=1000").await;
    let written: Vec<(String, String)> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "dashboard.write" && e["data"]["who"] == "token:hooks")
        .map(|e| (e["data"]["method"].as_str().unwrap().into(), e["data"]["path"].as_str().unwrap().into()))
        .collect();
    let orders = "/api/v1/webhooks/orders".to_string();
    let expected =
        vec![("PUT".into(), orders.clone()), ("PUT".into(), orders.clone()), ("DELETE".into(), orders)];
    assert_eq!(written, expected);
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_api_on_sqlite() {
    on_sqlite(suite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_api_on_postgres() {
    on_postgres(suite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_api_on_redis() {
    on_redis(suite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_writes_are_refused_read_only_and_without_csrf() {
    on_sqlite(|url| async move {
        let q = open(&url).await;
        let token = auth::create_token(&q, "viewer").await.unwrap().token;
        let run = start(q, DashboardConfig { read_only: true, ..Default::default() }).await;
        let http = reqwest::Client::new();
        let put = http.put(run.url("/api/v1/webhooks/orders")).bearer_auth(&token).json(&hook_body());
        assert_eq!(code(put.send().await.unwrap()).await, (403, "read_only".into()));
        let del = http.delete(run.url("/api/v1/webhooks/orders")).bearer_auth(&token);
        assert_eq!(code(del.send().await.unwrap()).await, (403, "read_only".into()));
        assert!(get_hook(&run.queue, "orders").await.unwrap().is_none());
        run.stop().await;

        // An open dashboard: a browser session must send its CSRF token.
        let dir = tempfile::tempdir().unwrap();
        let q = open(&format!("sqlite://{}", dir.path().join("open.db").display())).await;
        let run = start(q, DashboardConfig::default()).await;
        let b = browser();
        assert_eq!(b.get(run.url("/webhooks")).send().await.unwrap().status(), 200);
        let put = b.put(run.url("/api/v1/webhooks/orders")).json(&hook_body());
        assert_eq!(code(put.send().await.unwrap()).await, (403, "csrf".into()));
        assert!(get_hook(&run.queue, "orders").await.unwrap().is_none());
        run.stop().await;
    })
    .await;
}

async fn page(b: &reqwest::Client, url: String) -> String {
    let r = b.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200, "{url}");
    r.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_page_lists_hooks_and_links_deliveries_to_their_jobs() {
    on_sqlite(|url| async move {
        let q = open(&url).await;
        let run = start(q, DashboardConfig::default()).await;
        let b = browser();
        let empty = page(&b, run.url("/webhooks")).await;
        assert!(empty.contains("No webhooks") && empty.contains("href=\"/webhooks\""), "{empty}");

        let cfg = flexiq::webhooks::WebhookConfig {
            events: vec!["enqueued".into()],
            allow_private: true,
            ..flexiq::webhooks::WebhookConfig::new("http://127.0.0.1:9/in", SECRET)
        };
        flexiq::webhooks::set_hook(&run.queue, "billing", &cfg).await.unwrap();
        run.queue.set_setting("webhook:broken", "{not json").await.unwrap();
        let dispatcher = WebhookDispatcher::new(&run.queue, DispatchConfig::default()).unwrap();
        dispatcher.run_once().await.unwrap();
        run.queue.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
        assert_eq!(dispatcher.run_once().await.unwrap().deliveries, 1);
        let delivery =
            flexiq::webhooks::deliveries(&run.queue, Some("billing"), None, 10, None).await.unwrap();
        let job_id = delivery.items[0].id.to_string();

        let html = page(&b, run.url("/webhooks")).await;
        assert!(html.contains("data-webhook=\"billing\""), "{html}");
        assert!(html.contains("http://127.0.0.1:9/in"));
        assert!(html.contains("data-webhook=\"broken\"") && html.contains("not a valid hook"));
        assert!(html.contains(&format!("data-delivery=\"{job_id}\"")));
        assert!(html.contains(&format!("href=\"/jobs/{job_id}\"")), "links the delivery job");
        assert!(!html.contains(SECRET), "the page never shows a secret");
        run.stop().await;
    })
    .await;
}
