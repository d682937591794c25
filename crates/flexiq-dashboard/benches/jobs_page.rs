//! How long the jobs page takes on a big store: `jobs_page/<what>/<jobs>`.
//!
//! Fills a fresh SQLite file with `FLEXIQ_DASH_BENCH_JOBS` jobs (default 1,000,000, spread
//! over four queues and two tasks, delayed so they stay pending), serves it with an open
//! dashboard on loopback, and times a real HTTP round trip for the first HTML page, a filtered
//! page, a page deep into the listing (by cursor) and the JSON twin. The target for the HTML
//! page is under 300 ms.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use flexiq::{connect, ConnectOptions, EnqueueItem, EnqueueOptions};
use flexiq_dashboard::{serve, DashboardConfig};

const BATCH: usize = 10_000;

fn jobs_wanted() -> usize {
    std::env::var("FLEXIQ_DASH_BENCH_JOBS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let n = jobs_wanted();
    let (server, deep_cursor) = rt.block_on(async {
        let q = connect(&url, ConnectOptions::default()).await.unwrap();
        let mut made = 0;
        while made < n {
            let items = (made..(made + BATCH).min(n))
                .map(|i| {
                    let options = EnqueueOptions {
                        queue: Some(format!("q{}", i % 4)),
                        delay_ms: Some(86_400_000),
                        metadata: Some(format!("{{\"customer\":{}}}", i % 1000)),
                        ..Default::default()
                    };
                    EnqueueItem {
                        options,
                        ..EnqueueItem::new(if i % 2 == 0 { "even" } else { "odd" }, "payload")
                    }
                })
                .collect();
            q.enqueue_many(items).await.unwrap();
            made = (made + BATCH).min(n);
        }
        let mut cursor = None;
        for _ in 0..20 {
            let page = q.list_jobs_filtered_after(&Default::default(), 500, cursor.as_deref()).await.unwrap();
            cursor = page.next_cursor;
        }
        let config = DashboardConfig { bind: "127.0.0.1:0".parse().unwrap(), ..Default::default() };
        (serve(q, config).await.unwrap(), cursor)
    });
    let base = format!("http://{}", server.local_addr());
    let http = reqwest::Client::new();
    let get = |path: String| {
        let http = http.clone();
        let url = format!("{base}{path}");
        async move {
            let r = http.get(&url).send().await.unwrap();
            assert!(r.status().is_success(), "{url}: {}", r.status());
            r.bytes().await.unwrap()
        }
    };
    let mut g = c.benchmark_group("jobs_page");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.bench_function(format!("html_first/{n}"), |b| b.to_async(&rt).iter(|| get("/jobs".into())));
    g.bench_function(format!("html_filtered/{n}"), |b| {
        b.to_async(&rt).iter(|| get("/jobs?queue=q2&task=even&status=pending".into()))
    });
    if let Some(cursor) = &deep_cursor {
        g.bench_function(format!("html_deep/{n}"), |b| {
            b.to_async(&rt).iter(|| get(format!("/jobs?after={cursor}")))
        });
    }
    g.bench_function(format!("json_first/{n}"), |b| b.to_async(&rt).iter(|| get("/api/v1/jobs".into())));
    g.finish();
    rt.block_on(server.shutdown()).unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
