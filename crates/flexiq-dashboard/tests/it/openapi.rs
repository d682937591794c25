//! The OpenAPI document: generated from the mounted routes, so every documented operation
//! answers (never the router's "no route") and the document names every API area.

use flexiq_dashboard::{auth, openapi, DashboardConfig};
use serde_json::json;

use crate::fixture::{code, on_sqlite, open, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_operation_is_mounted() {
    on_sqlite(|url| async move {
        let q = open(&url).await;
        let token = auth::create_token(&q, "doc").await.unwrap().token;
        let run = start(q, DashboardConfig::default()).await;
        let http = reqwest::Client::new();

        let served: serde_json::Value =
            http.get(run.url("/api/v1/openapi.json")).send().await.unwrap().json().await.unwrap();
        assert_eq!(
            served,
            serde_json::to_value(openapi()).unwrap(),
            "the served document is the generated one"
        );
        assert_eq!(served["info"]["title"], "flexiq dashboard API", "the document's own info is served");
        assert!(served["info"]["description"].as_str().unwrap().contains("x-csrf-token"));
        let tags: Vec<&str> =
            served["tags"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
        assert!(tags.contains(&"webhooks") && tags.contains(&"queues"), "{tags:?}");
        assert!(served["components"]["schemas"]["ErrorBody"].is_object(), "the error schema is described");
        assert!(served["components"]["schemas"]["WebhookBody"].is_object(), "route schemas are described");
        let paths = served["paths"].as_object().unwrap();
        for expected in [
            "/api/v1/stats",
            "/api/v1/queues/{queue}/pause",
            "/api/v1/jobs",
            "/api/v1/jobs/{id}/dag",
            "/api/v1/dead-letters/{id}/retry",
            "/api/v1/retention",
            "/api/v1/settings/{key}",
            "/api/v1/workers",
            "/api/v1/metrics/timeseries",
            "/api/v1/events",
            "/api/v1/auth/login",
            "/api/v1/webhooks",
            "/api/v1/webhooks/{name}",
            "/api/v1/webhooks/{name}/deliveries",
        ] {
            assert!(paths.contains_key(expected), "{expected} missing from the document");
        }

        let mut operations = 0;
        for (path, item) in paths {
            let concrete = path
                .replace("{id}", flexiq::JobId::new().as_ref())
                .replace("{queue}", "q1")
                .replace("{key}", "k1")
                .replace("{name}", "n1");
            for method in ["get", "post", "put", "delete"] {
                if item.get(method).is_none() {
                    continue;
                }
                operations += 1;
                let m = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
                let mut req = http.request(m, run.url(&concrete)).bearer_auth(&token);
                if method != "get" && method != "delete" {
                    req = req.json(&json!({}));
                }
                let r = req.send().await.unwrap();
                let status = r.status().as_u16();
                assert_ne!(status, 405, "{method} {path} is documented but not mounted");
                if !r.status().is_success() && status != 204 {
                    if let Ok(body) = r.json::<serde_json::Value>().await {
                        assert_ne!(
                            body["error"]["code"], "no_route",
                            "{method} {path} is documented but not mounted"
                        );
                    }
                }
            }
        }
        assert!(operations >= 27, "{operations} operations documented");

        let (st, c) =
            code(http.get(run.url("/api/v1/undocumented")).bearer_auth(&token).send().await.unwrap()).await;
        assert_eq!((st, c.as_str()), (404, "no_route"), "the check above can tell a missing route");
        run.stop().await;
    })
    .await;
}
