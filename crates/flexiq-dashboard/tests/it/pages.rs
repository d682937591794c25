//! Every page renders from a seeded store, bad input gives an error page with the right
//! status, and the assets are served.

use flexiq_dashboard::DashboardConfig;

use crate::fixture::{browser, on_sqlite, open, seed, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_renders_and_bad_input_is_an_error_page() {
    on_sqlite(|url| async move {
        let q = open(&url).await;
        let seeded = seed(&q).await;
        let run = start(q, DashboardConfig::default()).await;
        let http = browser();
        let page = |path: String| {
            let http = http.clone();
            let url = run.url(&path);
            async move {
                let r = http.get(&url).send().await.unwrap();
                (r.status().as_u16(), r.text().await.unwrap())
            }
        };
        for (path, marker) in [
            ("/".to_string(), "id=\"throughput-chart\""),
            ("/queues".into(), "data-queue=\"emails\""),
            ("/jobs?queue=emails&status=pending".into(), "data-job="),
            ("/jobs?created_from=2000-01-01T00:00&created_to=2999-01-01T00:00".into(), "data-job="),
            (format!("/jobs/{}", seeded.child), "id=\"dag\""),
            (format!("/jobs/{}", seeded.completed), "hello payload"),
            ("/dead-letters".into(), "data-dead="),
            ("/retention".into(), "id=\"preview\""),
            ("/settings".into(), "id=\"settings\""),
            ("/workers".into(), "id=\"workers\""),
            ("/webhooks".into(), "id=\"webhooks\""),
        ] {
            let (status, body) = page(path.clone()).await;
            assert_eq!(status, 200, "{path}: {body}");
            assert!(body.contains(marker), "{path} lacks {marker}");
            assert!(body.contains("name=\"csrf-token\" content=\""), "{path} carries a csrf token");
        }
        let (status, body) = page("/jobs?created_from=yesterday".into()).await;
        assert_eq!(status, 400, "{body}");
        assert!(body.contains("yesterday"));
        assert_eq!(page(format!("/jobs/{}", flexiq::JobId::new())).await.0, 404);
        assert_eq!(page("/jobs?after=garbage".into()).await.0, 400);
        assert_eq!(page("/nowhere".into()).await.0, 404);
        let (status, js) = page("/assets/app.js".into()).await;
        assert_eq!(status, 200);
        assert!(js.contains("x-csrf-token"));
        assert_eq!(page("/assets/other.js".into()).await.0, 404);
        run.stop().await;
    })
    .await;
}
