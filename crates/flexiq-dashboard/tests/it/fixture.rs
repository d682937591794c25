//! Shared test scaffolding: isolated stores (a SQLite file in a tempdir, a PostgreSQL schema
//! of its own dropped after, a Redis key prefix of its own deleted after), a dashboard server
//! on a free loopback port, an HTTP client, and a seeded workload.

use std::time::Duration;

use flexiq::{connect, ConnectOptions, EnqueueOptions, HandlerError, Queue, Worker, WorkerConfig};
use flexiq_dashboard::{serve, DashboardConfig, ServerHandle};
use serde_json::Value;

pub(crate) fn unique(tag: &str) -> String {
    format!("{tag}{}", uuid_like())
}

fn uuid_like() -> String {
    flexiq::JobId::new().to_string().replace('-', "")
}

/// Runs `script` on a fresh SQLite file.
pub(crate) async fn on_sqlite<F, Fut>(script: F)
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    script(format!("sqlite://{}", dir.path().join("dash.db").display())).await;
}

fn pg_base() -> String {
    std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// Runs `script` on a PostgreSQL schema of its own, dropped whatever happened.
pub(crate) async fn on_postgres<F, Fut>(script: F)
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let base = pg_base();
    let schema = unique("fq_dash_");
    let result = tokio::spawn(script(format!("{base}?schema={schema}"))).await;
    let (client, conn) = tokio_postgres::connect(&base, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(conn);
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.expect("drop schema");
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// Runs `script` under a Redis key prefix of its own, deleted whatever happened.
pub(crate) async fn on_redis<F, Fut>(script: F)
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let base = flexiq_conformance::redis_kit::redis_url();
    let prefix = unique("fqdash");
    let result = tokio::spawn(script(format!("{base}?prefix={prefix}"))).await;
    flexiq_conformance::redis_kit::delete_prefix(&base, &prefix).await;
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// A dashboard serving one store.
pub(crate) struct Running {
    pub base: String,
    pub queue: Queue,
    pub server: ServerHandle,
}

impl Running {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub(crate) async fn stop(self) {
        self.server.shutdown().await.expect("server stops");
        self.queue.close().await.expect("close");
    }
}

/// Opens `url` and serves it on a free loopback port with `config` (its `bind` is replaced).
pub(crate) async fn start(queue: Queue, config: DashboardConfig) -> Running {
    let config = DashboardConfig { bind: "127.0.0.1:0".parse().unwrap(), ..config };
    let server = serve(queue.clone(), config).await.expect("dashboard starts");
    Running { base: format!("http://{}", server.local_addr()), queue, server }
}

pub(crate) async fn open(url: &str) -> Queue {
    connect(url, ConnectOptions::default()).await.expect("connect")
}

/// A client that keeps cookies, as a browser does.
pub(crate) fn browser() -> reqwest::Client {
    reqwest::Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// The error code of an error answer.
pub(crate) async fn code(r: reqwest::Response) -> (u16, String) {
    let status = r.status().as_u16();
    let body: Value = r.json().await.expect("json error body");
    (status, body["error"]["code"].as_str().unwrap_or_default().to_string())
}

/// What [`seed`] made.
pub(crate) struct Seeded {
    /// A completed job of task `ok` in queue `emails`.
    pub completed: String,
    /// Pending jobs of task `later` in queue `emails` (delayed an hour).
    pub pending: Vec<String>,
    /// The dead job of task `boom` (queue `reports`).
    pub dead_job: String,
    /// A parent (pending, delayed) and its waiting child.
    pub parent: String,
    pub child: String,
}

/// Runs a small workload: completions, a dead letter, delayed jobs and a dependency edge.
pub(crate) async fn seed(q: &Queue) -> Seeded {
    let emails = || EnqueueOptions { queue: Some("emails".into()), ..Default::default() };
    let mut worker = Worker::new(
        q.clone(),
        WorkerConfig {
            poll_interval: Duration::from_millis(50),
            queues: vec!["emails".into(), "reports".into()],
            ..Default::default()
        },
    )
    .unwrap();
    worker.register("ok", |_ctx| async move { Ok(Some(b"done".to_vec())) }).unwrap();
    worker.register("boom", |_ctx| async move { Err(HandlerError::retryable("boom: disk full")) }).unwrap();
    let completed = q.enqueue("ok", "hello payload", emails()).await.unwrap().to_string();
    let mut done = vec![completed.clone()];
    for i in 0..3 {
        done.push(q.enqueue("ok", format!("more {i}"), emails()).await.unwrap().to_string());
    }
    let dead_opts =
        EnqueueOptions { queue: Some("reports".into()), max_retries: Some(0), ..Default::default() };
    let dead_job = q.enqueue("boom", "bad", dead_opts).await.unwrap().to_string();
    let running = worker.start();
    for id in &done {
        q.result(id, Some(Duration::from_secs(30)), None).await.expect("job completes");
    }
    assert!(q.result(&dead_job, Some(Duration::from_secs(30)), None).await.is_err(), "boom dies");
    running.shutdown().await.unwrap();
    let later = || EnqueueOptions { delay_ms: Some(3_600_000), ..emails() };
    let mut pending = Vec::new();
    for i in 0..5 {
        let meta = EnqueueOptions { metadata: Some(format!("{{\"n\":{i}}}")), ..later() };
        pending.push(q.enqueue("later", format!("p{i}"), meta).await.unwrap().to_string());
    }
    let parent = q.enqueue("later", "parent", later()).await.unwrap().to_string();
    let child_opts = EnqueueOptions { depends_on: vec![parent.clone()], ..emails() };
    let child = q.enqueue("ok", "child", child_opts).await.unwrap().to_string();
    Seeded { completed, pending, dead_job, parent, child }
}
