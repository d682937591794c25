//! The API suite, run on every store: every route, with bad input answered by typed errors.

use flexiq_dashboard::{auth, DashboardConfig};
use reqwest::Method;
use serde_json::{json, Value};

use crate::fixture::{code, on_postgres, on_redis, on_sqlite, open, seed, start, Running};

struct Api {
    run: Running,
    http: reqwest::Client,
    token: String,
}

impl Api {
    fn req(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, self.run.url(path)).bearer_auth(&self.token)
    }

    async fn get(&self, path: &str) -> Value {
        let r = self.req(Method::GET, path).send().await.unwrap();
        assert_eq!(r.status(), 200, "GET {path}: {}", r.text().await.unwrap());
        r.json().await.unwrap()
    }

    async fn send(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        let mut b = self.req(method.clone(), path);
        if let Some(body) = body {
            b = b.json(&body);
        }
        let r = b.send().await.unwrap();
        assert!(r.status().is_success(), "{method} {path}: {} {}", r.status(), r.text().await.unwrap());
        if r.status() == 204 {
            return Value::Null;
        }
        r.json().await.unwrap()
    }

    async fn fails(&self, method: Method, path: &str, body: Option<Value>) -> (u16, String) {
        let mut b = self.req(method, path);
        if let Some(body) = body {
            b = b.json(&body);
        }
        code(b.send().await.unwrap()).await
    }
}

async fn suite(url: String) {
    let q = open(&url).await;
    let seeded = seed(&q).await;
    let token = auth::create_token(&q, "suite").await.unwrap().token;
    let run = start(q, DashboardConfig::default()).await;
    let api = Api { run, http: reqwest::Client::new(), token };

    counts_and_queues(&api).await;
    job_listing(&api, &seeded).await;
    job_detail_and_actions(&api, &seeded).await;
    dead_letters(&api).await;
    retention_settings_workers_metrics(&api).await;
    bad_requests(&api).await;
    writes_are_recorded(&api).await;
    prometheus_text(&api).await;
    api.run.stop().await;
}

async fn counts_and_queues(api: &Api) {
    let s = api.get("/api/v1/stats").await;
    assert_eq!(s["total"]["completed"], 4, "{s}");
    assert_eq!(s["total"]["dead"], 1, "{s}");
    assert_eq!(s["total"]["waiting"], 1, "{s}");
    assert_eq!(s["by_queue"]["emails"]["pending"], 6, "{s}");
    let queues = api.get("/api/v1/queues").await;
    let names: Vec<&str> = queues.as_array().unwrap().iter().map(|q| q["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"emails") && names.contains(&"reports"), "{names:?}");

    let paused = api.send(Method::POST, "/api/v1/queues/emails/pause", None).await;
    assert_eq!(paused["controls"]["paused"], true);
    assert_eq!(api.get("/api/v1/queues/emails").await["controls"]["paused"], true);
    let resumed = api.send(Method::POST, "/api/v1/queues/emails/resume", None).await;
    assert_eq!(resumed["controls"]["paused"], false);

    let rl =
        api.send(Method::PUT, "/api/v1/queues/emails/rate-limit", Some(json!({"rate_limit": "10/s"}))).await;
    assert_eq!(rl["controls"]["rate_limit"], "10/s");
    let (st, c) =
        api.fails(Method::PUT, "/api/v1/queues/emails/rate-limit", Some(json!({"rate_limit": "fast"}))).await;
    assert_eq!((st, c.as_str()), (400, "invalid_argument"));
    let cleared =
        api.send(Method::PUT, "/api/v1/queues/emails/rate-limit", Some(json!({"rate_limit": null}))).await;
    assert_eq!(cleared["controls"]["rate_limit"], Value::Null);

    let cc =
        api.send(Method::PUT, "/api/v1/queues/emails/concurrency", Some(json!({"concurrency": 3}))).await;
    assert_eq!(cc["controls"]["concurrency"], 3);
    let (st, _) =
        api.fails(Method::PUT, "/api/v1/queues/emails/concurrency", Some(json!({"concurrency": 0}))).await;
    assert_eq!(st, 400);
    api.send(Method::PUT, "/api/v1/queues/emails/concurrency", Some(json!({"concurrency": null}))).await;
}

async fn job_listing(api: &Api, seeded: &crate::fixture::Seeded) {
    let first = api.get("/api/v1/jobs?queue=emails&status=pending&limit=4").await;
    assert_eq!(first["items"].as_array().unwrap().len(), 4);
    let cursor = first["next_cursor"].as_str().expect("a next page").to_string();
    let second = api.get(&format!("/api/v1/jobs?queue=emails&status=pending&limit=4&after={cursor}")).await;
    let ids: Vec<&str> = first["items"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["items"].as_array().unwrap())
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 6, "every pending job of emails once: {ids:?}");
    assert!(seeded.pending.iter().all(|p| ids.contains(&p.as_str())));
    let errs = api.get("/api/v1/jobs?error=disk%20full").await;
    assert_eq!(errs["items"][0]["id"], seeded.dead_job.as_str());
    let meta = api.get("/api/v1/jobs?metadata=%22n%22%3A3").await;
    assert_eq!(meta["items"].as_array().unwrap().len(), 1, "{meta}");
    let by_task = api.get("/api/v1/jobs?task=ok&status=completed").await;
    assert_eq!(by_task["items"].as_array().unwrap().len(), 4);

    let (st, c) = api.fails(Method::GET, "/api/v1/jobs?after=garbage!!", None).await;
    assert_eq!((st, c.as_str()), (400, "invalid_argument"));
    let (st, _) = api.fails(Method::GET, &format!("/api/v1/jobs?queue=reports&after={cursor}"), None).await;
    assert_eq!(st, 400, "a cursor is bound to its filter");
    let (st, _) = api.fails(Method::GET, "/api/v1/jobs?status=sleeping", None).await;
    assert_eq!(st, 400);
    let now = api.run.queue.now_ms();
    let recent =
        api.get(&format!("/api/v1/jobs?created_after={}&created_before={}", now - 600_000, now + 1)).await;
    assert!(recent["items"].as_array().unwrap().len() >= 10, "{recent}");
    let future = api.get(&format!("/api/v1/jobs?created_after={}", now + 600_000)).await;
    assert!(future["items"].as_array().unwrap().is_empty());
    let (st, _) =
        api.fails(Method::GET, &format!("/api/v1/jobs?created_after={now}&created_before={now}"), None).await;
    assert_eq!(st, 400, "an empty created-at range is refused");
    let (st, _) = api.fails(Method::GET, "/api/v1/jobs?limit=0", None).await;
    assert_eq!(st, 400);
    let (st, _) = api.fails(Method::GET, "/api/v1/jobs?limit=lots", None).await;
    assert_eq!(st, 400);
}

async fn job_detail_and_actions(api: &Api, seeded: &crate::fixture::Seeded) {
    let d = api.get(&format!("/api/v1/jobs/{}", seeded.completed)).await;
    assert_eq!(d["job"]["payload"]["text"], "hello payload");
    assert_eq!(d["job"]["result"]["text"], "done");
    assert_eq!(d["job"]["status"], "completed");
    let dead = api.get(&format!("/api/v1/jobs/{}", seeded.dead_job)).await;
    assert!(dead["errors"][0]["error"].as_str().unwrap().contains("disk full"), "{dead}");

    let unknown = flexiq::JobId::new().to_string();
    let (st, c) = api.fails(Method::GET, &format!("/api/v1/jobs/{unknown}"), None).await;
    assert_eq!((st, c.as_str()), (404, "not_found"));
    let (st, c) = api.fails(Method::GET, "/api/v1/jobs/not-an-id", None).await;
    assert_eq!((st, c.as_str()), (400, "invalid_argument"));

    let dag = api.get(&format!("/api/v1/jobs/{}/dag", seeded.child)).await;
    assert_eq!(dag["nodes"].as_array().unwrap().len(), 2, "{dag}");
    assert_eq!(dag["edges"][0]["from"], seeded.parent.as_str());
    assert_eq!(dag["edges"][0]["to"], seeded.child.as_str());

    let replay = api.send(Method::POST, &format!("/api/v1/jobs/{}/replay", seeded.completed), None).await;
    let new_id = replay["job_id"].as_str().unwrap();
    assert_eq!(api.get(&format!("/api/v1/jobs/{new_id}")).await["job"]["payload"]["text"], "hello payload");
    let (st, _) = api.fails(Method::POST, &format!("/api/v1/jobs/{unknown}/replay"), None).await;
    assert_eq!(st, 404);

    let victim = &seeded.pending[0];
    let cancelled = api.send(Method::POST, &format!("/api/v1/jobs/{victim}/cancel"), None).await;
    assert_eq!(cancelled["status"], "cancelled");
    let (st, c) = api.fails(Method::POST, &format!("/api/v1/jobs/{victim}/cancel"), None).await;
    assert_eq!((st, c.as_str()), (409, "conflict"));
}

async fn dead_letters(api: &Api) {
    let page = api.get("/api/v1/dead-letters").await;
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["task"], "boom");
    assert_eq!(api.get("/api/v1/dead-letters/by-task").await["boom"], 1);
    assert_eq!(api.get("/api/v1/dead-letters?task=boom").await["items"].as_array().unwrap().len(), 1);
    let (st, _) = api.fails(Method::GET, "/api/v1/dead-letters?after=%%%", None).await;
    assert_eq!(st, 400);
    let dead_id = items[0]["id"].as_str().unwrap().to_string();
    let retried = api.send(Method::POST, &format!("/api/v1/dead-letters/{dead_id}/retry"), None).await;
    assert!(retried["job_id"].as_str().is_some());
    let (st, c) = api.fails(Method::POST, &format!("/api/v1/dead-letters/{dead_id}/retry"), None).await;
    assert_eq!((st, c.as_str()), (404, "not_found"), "a retried dead letter is gone");
    let (st, _) = api.fails(Method::DELETE, &format!("/api/v1/dead-letters/{dead_id}"), None).await;
    assert_eq!(st, 404);
    let (st, _) = api.fails(Method::DELETE, "/api/v1/dead-letters/zzz", None).await;
    assert_eq!(st, 400);
    let purged = api.send(Method::POST, "/api/v1/dead-letters/purge", Some(json!({"task": "boom"}))).await;
    assert_eq!(purged["count"], 0);
    let purged =
        api.send(Method::POST, "/api/v1/dead-letters/purge", Some(json!({"older_than_secs": 0}))).await;
    assert_eq!(purged["count"], 0);
    let (st, _) = api.fails(Method::POST, "/api/v1/dead-letters/purge", Some(json!({}))).await;
    assert_eq!(st, 400);
}

async fn retention_settings_workers_metrics(api: &Api) {
    let r = api.get("/api/v1/retention").await;
    assert_eq!(r["preview_defaulted"], true);
    assert_eq!(r["preview_windows"]["task_logs"], 7 * 86_400_000_u64);
    let r = api.get("/api/v1/retention?task_logs=60").await;
    assert_eq!(r["preview_windows"]["task_logs"], 60_000);
    let (st, _) = api.fails(Method::GET, "/api/v1/retention?task_logs=-5", None).await;
    assert_eq!(st, 400);

    api.send(Method::PUT, "/api/v1/settings/app.colour", Some(json!({"value": "blue"}))).await;
    assert_eq!(api.get("/api/v1/settings/app.colour").await["value"], "blue");
    let all = api.get("/api/v1/settings").await;
    let keys: Vec<&str> = all.as_array().unwrap().iter().map(|s| s["key"].as_str().unwrap()).collect();
    assert!(keys.contains(&"app.colour"));
    assert!(keys.iter().all(|k| !k.starts_with("auth:")), "reserved keys are hidden: {keys:?}");
    let (st, c) = api.fails(Method::GET, "/api/v1/settings/auth:dashboard:password", None).await;
    assert_eq!((st, c.as_str()), (403, "forbidden"));
    let (st, _) = api.fails(Method::PUT, "/api/v1/settings/retention:x", Some(json!({"value": "1"}))).await;
    assert_eq!(st, 403);
    api.send(Method::DELETE, "/api/v1/settings/app.colour", None).await;
    let (st, _) = api.fails(Method::DELETE, "/api/v1/settings/app.colour", None).await;
    assert_eq!(st, 404);

    assert!(api.get("/api/v1/workers").await.is_array());
    let m = api.get("/api/v1/metrics/tasks").await;
    assert_eq!(m["ok"]["success_count"], 4, "{m}");
    let ts = api.get("/api/v1/metrics/timeseries?bucket_secs=60").await;
    assert!(!ts.as_array().unwrap().is_empty());
    let (st, _) = api.fails(Method::GET, "/api/v1/metrics/tasks?since_secs=0", None).await;
    assert_eq!(st, 400);
    let (st, _) = api.fails(Method::GET, "/api/v1/events?after=not-an-event-id", None).await;
    assert_eq!(st, 400);
}

async fn bad_requests(api: &Api) {
    let r = api
        .req(Method::PUT, "/api/v1/settings/k")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(code(r).await, (400, "invalid_argument".to_string()));
    let r = api.req(Method::PUT, "/api/v1/settings/k").json(&json!({"value": 1})).send().await.unwrap();
    assert_eq!(code(r).await.0, 400, "a number is not a string");
    let big = "x".repeat(200 * 1024);
    // The server answers 413 without reading the rest of the body and drops the connection:
    // `Connection: close` keeps the client from handing that connection to the next request.
    let r = api
        .req(Method::PUT, "/api/v1/settings/k")
        .header("connection", "close")
        .json(&json!({ "value": big }))
        .send()
        .await
        .unwrap();
    assert_eq!(code(r).await, (413, "payload_too_large".to_string()));
    let (st, c) = api.fails(Method::GET, "/api/v1/nothing/here", None).await;
    assert_eq!((st, c.as_str()), (404, "no_route"));
}

async fn writes_are_recorded(api: &Api) {
    let events = api.get("/api/v1/events?limit=1000").await;
    let writes: Vec<&Value> =
        events.as_array().unwrap().iter().filter(|e| e["name"] == "dashboard.write").collect();
    assert!(
        writes
            .iter()
            .any(|e| e["data"]["path"] == "/api/v1/queues/emails/pause" && e["data"]["who"] == "token:suite"),
        "{writes:?}"
    );
    assert!(writes.iter().all(|e| e["data"]["status"].as_u64().is_some_and(|s| s < 300)));
}

async fn prometheus_text(api: &Api) {
    let r = api.req(Method::GET, "/metrics").send().await.unwrap();
    assert_eq!(r.status(), 200);
    let text = r.text().await.unwrap();
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("prometheus text parses");
    assert!(!scrape.samples.is_empty());
    assert!(scrape.samples.iter().all(|s| s.metric.starts_with("flexiq_")), "{text}");
    let unauthenticated = reqwest::get(api.run.url("/metrics")).await.unwrap();
    assert_eq!(unauthenticated.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_suite_on_sqlite() {
    on_sqlite(suite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_suite_on_postgres() {
    on_postgres(suite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_suite_on_redis() {
    on_redis(suite).await;
}
