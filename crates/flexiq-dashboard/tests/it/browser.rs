//! The pages in a real browser: the machine's Chromium, headless, driven over CDP by
//! `tests/browser/drive.mjs` (playwright-core, which never downloads a browser).
//!
//! The test installs what it needs when it is missing — Debian's `chromium` with apt-get, the
//! pinned playwright-core with `npm ci` — rather than skipping. Screenshots of every page the
//! script checks go to `<target dir>/dashboard-screenshots/` on each run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use flexiq::{EnqueueItem, EnqueueOptions};
use flexiq_dashboard::{auth, DashboardConfig};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::fixture::{on_sqlite, open, seed, start};

const PASSWORD: &str = "browser test password";
const BULK_QUEUE: &str = "bulk";
const BULK_JOBS: usize = 5_000;
const HOOK_NAME: &str = "loopback";
const HOOK_URL: &str = "http://127.0.0.1:9/browser-hook";
const HOOK_SECRET: &str = "browser-walkthrough-secret";

fn run(cmd: &mut Command, what: &str) {
    let status = cmd.status().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(status.success(), "{what} failed: {status}");
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The system Chromium, installed from Debian when missing.
fn chromium() -> PathBuf {
    if let Some(p) = which("chromium") {
        return p;
    }
    run(Command::new("apt-get").arg("update").arg("-qq"), "apt-get update");
    run(
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "chromium"])
            .env("DEBIAN_FRONTEND", "noninteractive"),
        "apt-get install chromium",
    );
    which("chromium").expect("chromium is on PATH after installing it")
}

/// The browser script's folder, with its pinned playwright-core installed.
fn driver_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    if !dir.join("node_modules/playwright-core/package.json").is_file() {
        run(
            Command::new("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(&dir),
            "npm ci (playwright-core)",
        );
    }
    dir
}

fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let dir = target.join("dashboard-screenshots");
    // Fresh on every run, so a screenshot found afterwards was taken by this run.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("screenshot folder");
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_walkthrough_in_headless_chromium() {
    let browser = chromium();
    let driver = driver_dir();
    let shots = screenshot_dir();
    on_sqlite(|url| async move {
        let q = open(&url).await;
        let seeded = seed(&q).await;
        let later = || EnqueueOptions {
            queue: Some(BULK_QUEUE.into()),
            delay_ms: Some(3_600_000),
            ..Default::default()
        };
        for chunk in 0..BULK_JOBS / 500 {
            let items = (0..500)
                .map(|i| EnqueueItem {
                    options: later(),
                    ..EnqueueItem::new("bulk", format!("job {chunk}-{i}"))
                })
                .collect();
            q.enqueue_many(items).await.unwrap();
        }
        auth::set_password(&q, PASSWORD).await.unwrap();
        let dash = start(q.clone(), DashboardConfig::default()).await;

        let mut child = tokio::process::Command::new("node")
            .arg(driver.join("drive.mjs"))
            .current_dir(&driver)
            .env("DASH_URL", &dash.base)
            .env("DASH_PASSWORD", PASSWORD)
            .env("DASH_CHROMIUM", &browser)
            .env("DASH_SHOTS", &shots)
            .env("DASH_CHILD_JOB", &seeded.child)
            .env("DASH_BULK_QUEUE", BULK_QUEUE)
            .env("DASH_BULK_JOBS", BULK_JOBS.to_string())
            .env("DASH_HOOK_NAME", HOOK_NAME)
            .env("DASH_HOOK_URL", HOOK_URL)
            .env("DASH_HOOK_SECRET", HOOK_SECRET)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs the browser script");
        let mut stdin = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut steps = Vec::new();
        // A bound on the whole walk so a wedged browser fails the test instead of hanging it.
        let walk = async {
            while let Some(line) = out.next_line().await.expect("script output") {
                steps.push(line.clone());
                if line == "LIVE_READY" {
                    for i in 0..3 {
                        q.enqueue(
                            "live",
                            format!("live {i}"),
                            EnqueueOptions { delay_ms: Some(3_600_000), ..Default::default() },
                        )
                        .await
                        .unwrap();
                    }
                    stdin.write_all(b"GO\n").await.unwrap();
                    stdin.flush().await.unwrap();
                }
            }
            child.wait().await.expect("script exit")
        };
        let status = tokio::time::timeout(Duration::from_secs(300), walk).await.expect("the walk ends");
        assert!(status.success(), "browser script failed after {steps:?}");
        assert_eq!(steps.last().map(String::as_str), Some("DONE"), "{steps:?}");
        assert!(q.paused_queues().await.unwrap().is_empty(), "resumed at the end");
        assert!(q.dead_letters(10, 0).await.unwrap().is_empty(), "the dead letter was retried");
        let hook =
            flexiq::webhooks::get_hook(&q, HOOK_NAME).await.unwrap().expect("the form created the hook");
        assert_eq!((hook.url.as_str(), hook.allow_private), (HOOK_URL, true));
        assert_eq!(hook.events, vec!["completed".to_string(), "dead".to_string()]);
        assert_eq!(hook.secrets, vec![HOOK_SECRET.to_string()]);
        for name in [
            "login",
            "overview",
            "overview-live",
            "queues-paused",
            "dead-letters",
            "jobs",
            "job-dag",
            "webhooks",
        ] {
            let file = shots.join(format!("{name}.png"));
            let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
            assert!(size > 1_000, "screenshot {} written", file.display());
        }
        dash.stop().await;
    })
    .await;
}
