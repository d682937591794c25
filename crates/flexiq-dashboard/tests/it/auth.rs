//! Auth: passwords and sessions, CSRF, bearer tokens, the login limiter, read-only mode, the
//! refusal of an exposed open server, and the record of writes.

use flexiq_dashboard::{auth, serve, DashboardConfig, ServeError};
use reqwest::header::{LOCATION, SET_COOKIE};
use serde_json::{json, Value};

use crate::fixture::{browser, code, on_sqlite, open, start};

const PASSWORD: &str = "correct horse battery";

async fn csrf_of(http: &reqwest::Client, base: &str) -> String {
    let s: Value =
        http.get(format!("{base}/api/v1/auth/session")).send().await.unwrap().json().await.unwrap();
    s["csrf_token"].as_str().expect("a session with a csrf token").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn password_sessions_and_csrf() {
    on_sqlite(|url| async move {
        let q = open(&url).await;
        auth::set_password(&q, PASSWORD).await.unwrap();
        let run = start(q, DashboardConfig::default()).await;
        let http = browser();

        let (st, c) = code(http.get(run.url("/api/v1/stats")).send().await.unwrap()).await;
        assert_eq!((st, c.as_str()), (401, "unauthorized"));
        let page = http.get(run.url("/jobs")).send().await.unwrap();
        assert!(page.status().is_redirection());
        assert_eq!(page.headers()[LOCATION], "/login");
        assert_eq!(http.get(run.url("/login")).send().await.unwrap().status(), 200);
        assert_eq!(http.get(run.url("/api/v1/openapi.json")).send().await.unwrap().status(), 200);

        let wrong = http.post(run.url("/api/v1/auth/login")).json(&json!({"password": "nope nope"})).send();
        assert_eq!(code(wrong.await.unwrap()).await, (401, "unauthorized".into()));
        let ok = http
            .post(run.url("/api/v1/auth/login"))
            .json(&json!({ "password": PASSWORD }))
            .send()
            .await
            .unwrap();
        assert_eq!(ok.status(), 200);
        let cookie = ok.headers()[SET_COOKIE].to_str().unwrap().to_string();
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
        let session: Value = ok.json().await.unwrap();
        assert_eq!(session["who"], "password");
        let csrf = session["csrf_token"].as_str().unwrap().to_string();

        assert_eq!(http.get(run.url("/api/v1/stats")).send().await.unwrap().status(), 200);
        assert_eq!(http.get(run.url("/jobs")).send().await.unwrap().status(), 200);
        let pause = || http.post(run.url("/api/v1/queues/q1/pause"));
        assert_eq!(code(pause().send().await.unwrap()).await, (403, "csrf".into()));
        assert_eq!(
            code(pause().header("x-csrf-token", "forged").send().await.unwrap()).await,
            (403, "csrf".into())
        );
        assert_eq!(pause().header("x-csrf-token", &csrf).send().await.unwrap().status(), 200);
        assert_eq!(run.queue.paused_queues().await.unwrap(), vec!["q1".to_string()]);

        let out =
            http.post(run.url("/api/v1/auth/logout")).header("x-csrf-token", &csrf).send().await.unwrap();
        assert_eq!(out.status(), 204);
        assert_eq!(http.get(run.url("/api/v1/stats")).send().await.unwrap().status(), 401);
        run.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_tokens_need_no_csrf_and_bad_ones_are_refused() {
    on_sqlite(|url| async move {
        let q = open(&url).await;
        let token = auth::create_token(&q, "ci").await.unwrap();
        let run = start(q, DashboardConfig::default()).await;
        let http = reqwest::Client::new();
        let r = http.post(run.url("/api/v1/queues/q1/pause")).bearer_auth(&token.token).send().await.unwrap();
        assert_eq!(r.status(), 200);
        for bad in ["fqd_00_nope".to_string(), format!("{}x", token.token), "garbage".into()] {
            let r = http.get(run.url("/api/v1/stats")).bearer_auth(&bad).send().await.unwrap();
            assert_eq!(code(r).await, (401, "unauthorized".into()), "{bad}");
        }
        let login = http.post(run.url("/api/v1/auth/login")).json(&json!({ "token": token.token })).send();
        assert_eq!(login.await.unwrap().status(), 200, "a browser may log in with a token");
        assert!(auth::revoke_token(&run.queue, &token.id).await.unwrap());
        let r = http.get(run.url("/api/v1/stats")).bearer_auth(&token.token).send().await.unwrap();
        assert_eq!(r.status(), 401, "a revoked token stops working");
        run.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_attempts_are_rate_limited() {
    on_sqlite(|url| async move {
        let q = open(&url).await;
        auth::set_password(&q, PASSWORD).await.unwrap();
        let run = start(q, DashboardConfig { login_attempts_per_minute: 3, ..Default::default() }).await;
        let http = browser();
        for _ in 0..3 {
            let r = http.post(run.url("/api/v1/auth/login")).json(&json!({"password": "guess guess"})).send();
            assert_eq!(r.await.unwrap().status(), 401);
        }
        let r = http.post(run.url("/api/v1/auth/login")).json(&json!({ "password": PASSWORD })).send();
        assert_eq!(
            code(r.await.unwrap()).await,
            (429, "rate_limited".into()),
            "even the right password waits"
        );
        run.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_refuses_every_write() {
    on_sqlite(|url| async move {
        let q = open(&url).await;
        let token = auth::create_token(&q, "viewer").await.unwrap().token;
        let run = start(q, DashboardConfig { read_only: true, ..Default::default() }).await;
        let http = reqwest::Client::new();
        for (method, path) in [
            (reqwest::Method::POST, "/api/v1/queues/q1/pause"),
            (reqwest::Method::PUT, "/api/v1/settings/a"),
            (reqwest::Method::DELETE, "/api/v1/settings/a"),
            (reqwest::Method::POST, "/api/v1/dead-letters/purge"),
        ] {
            let r =
                http.request(method, run.url(path)).bearer_auth(&token).json(&json!({"value": "x"})).send();
            assert_eq!(code(r.await.unwrap()).await, (403, "read_only".into()), "{path}");
        }
        assert!(run.queue.paused_queues().await.unwrap().is_empty());
        let s = http.get(run.url("/api/v1/auth/session")).bearer_auth(&token).send().await.unwrap();
        assert_eq!(s.json::<Value>().await.unwrap()["read_only"], true);
        assert_eq!(
            http.get(run.url("/api/v1/stats")).bearer_auth(&token).send().await.unwrap().status(),
            200
        );
        run.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_dashboard_stays_on_loopback_and_still_needs_csrf() {
    on_sqlite(|url| async move {
        let q = open(&url).await;
        let exposed = DashboardConfig { bind: "0.0.0.0:0".parse().unwrap(), ..Default::default() };
        match serve(q.clone(), exposed).await {
            Err(ServeError::Refused(e)) => assert_eq!(e.code, "forbidden"),
            other => panic!("an exposed open dashboard must be refused, got {other:?}"),
        }
        let run = start(q, DashboardConfig::default()).await;
        let http = browser();
        assert_eq!(http.get(run.url("/api/v1/stats")).send().await.unwrap().status(), 200);
        let r = http.post(run.url("/api/v1/queues/q1/pause")).send().await.unwrap();
        assert_eq!(code(r).await, (403, "csrf".into()), "no session, no csrf token, no write");
        let csrf = csrf_of(&http, &run.base).await;
        let r =
            http.post(run.url("/api/v1/queues/q1/pause")).header("x-csrf-token", csrf).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let events = run.queue.read_events(None, 0, 100).await.unwrap();
        let write = events.iter().find(|e| e.name == "dashboard.write").expect("the write is recorded");
        assert_eq!(write.data["who"], "anonymous");
        assert_eq!(write.data["method"], "POST");
        assert_eq!(write.data["client"], "127.0.0.1");
        run.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_are_recorded_in_settings_while_events_are_off() {
    on_sqlite(|url| async move {
        let q = open(&url).await;
        let token = auth::create_token(&q, "ops").await.unwrap().token;
        q.set_events_enabled(false).await.unwrap();
        let run = start(q, DashboardConfig::default()).await;
        let http = reqwest::Client::new();
        let r = http.post(run.url("/api/v1/queues/q1/pause")).bearer_auth(&token).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let settings = run.queue.list_settings().await.unwrap();
        let (_, record) = settings.iter().find(|(k, _)| k.starts_with("auth:audit:")).expect("a record");
        let record: Value = serde_json::from_str(record).unwrap();
        assert_eq!(record["who"], "token:ops");
        assert_eq!(record["path"], "/api/v1/queues/q1/pause");
        run.stop().await;
    })
    .await;
}
