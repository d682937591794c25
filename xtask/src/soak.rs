//! `cargo xtask soak`: the long-running checks. A steady mixed load on each store with its
//! memory, descriptors and connections sampled (the `soak` binary of flexiq-testkit, built in
//! release mode, one process per store, run side by side), then the long forms of the seeded
//! simulation campaigns and the crash campaigns. CI runs the load alone for five minutes.
//!
//! A store's load passes when it stayed flat and its end state adds up (the binary judges
//! both and prints one JSON line); the task exits non-zero when any load or campaign failed, or
//! when a campaign it should run is missing.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::steps::{cargo, root, run, target_dir};
use crate::{services, BenchStore};

/// The crash campaigns' test file (one test per store).
const CRASH_CAMPAIGN: &str = "crates/flexiq-testkit/tests/crash_campaign.rs";

/// What `cargo xtask soak` runs.
pub(crate) struct SoakPlan {
    /// Seconds of load per store.
    pub(crate) secs: u64,
    /// The stores (all three by default).
    pub(crate) stores: Vec<BenchStore>,
    /// Load only: no seeded or crash campaigns afterwards.
    pub(crate) skip_campaigns: bool,
}

fn soak_name(s: BenchStore) -> &'static str {
    match s {
        BenchStore::Sqlite => "sqlite",
        BenchStore::Pg => "pg",
        BenchStore::Redis => "redis",
    }
}

/// The long form: the load, then (unless skipped) the campaigns.
pub(crate) fn soak(plan: &SoakPlan) -> Result<(), String> {
    let started = Instant::now();
    if plan.stores.iter().any(|s| !matches!(s, BenchStore::Sqlite)) {
        services::ensure()?;
    }
    let mut failures = Vec::new();
    if let Err(e) = load(plan.secs, &plan.stores, Build::Release) {
        failures.push(e);
    }
    if !plan.skip_campaigns {
        for (label, result) in campaigns(&plan.stores) {
            println!("xtask soak: {label}: {}", result.as_ref().map_or_else(|e| e.as_str(), |()| "passed"));
            if let Err(e) = result {
                failures.push(e);
            }
        }
    }
    println!("\nxtask soak: finished in {:.0} s", started.elapsed().as_secs_f64());
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("soak failed:\n  {}", failures.join("\n  ")))
    }
}

/// CI's form: five minutes of load, every store at once, no campaigns (their short forms run
/// in `cargo test`). It uses the debug build the Rust tests just made, so CI compiles nothing
/// more for it: the load is lighter than the release soak's, and flatness is judged the same.
pub(crate) fn ci() -> Result<(), String> {
    load(300, &[BenchStore::Sqlite, BenchStore::Pg, BenchStore::Redis], Build::Debug)
}

/// Which build of the load generator runs.
#[derive(Clone, Copy)]
enum Build {
    /// The test build's binary, built with the Rust tests' own arguments (nothing new to compile).
    Debug,
    /// An optimized build, for the long form.
    Release,
}

/// Builds the load generator and runs it on each store side by side for `secs`, streaming
/// its samples, then prints the summary table and each store's JSON line.
fn load(secs: u64, stores: &[BenchStore], build: Build) -> Result<(), String> {
    let bin = match build {
        Build::Debug => {
            // The Rust tests' own build (integration tests build the crate's binaries), so
            // nothing is compiled again when they just ran.
            run(
                "cargo test --no-run (the test build, which holds the soak load generator)",
                &mut cargo(&crate::steps::excluding_bindings(vec![
                    "test",
                    "--workspace",
                    "--all-features",
                    "--no-run",
                ])),
            )?;
            target_dir().join("debug/soak")
        }
        Build::Release => {
            run(
                "cargo build --release soak (flexiq-testkit load generator)",
                &mut cargo(&[
                    "build",
                    "--release",
                    "-p",
                    "flexiq-testkit",
                    "--all-features",
                    "--bin",
                    "soak",
                ]),
            )?;
            target_dir().join("release/soak")
        }
    };
    println!(
        "\n==> soak load: {secs} s on {}",
        stores.iter().map(|s| soak_name(*s)).collect::<Vec<_>>().join(", ")
    );
    let mut running = Vec::new();
    for (n, store) in stores.iter().enumerate() {
        let name = soak_name(*store);
        let mut child = Command::new(&bin)
            .args(["--store", name, "--secs", &secs.to_string(), "--seed", &(n + 1).to_string()])
            .current_dir(root())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("soak {name}: cannot start {}: {e}", bin.display()))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let reader = std::thread::spawn(move || {
            let mut json = None;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with('{') {
                    json = Some(line);
                } else {
                    println!("{line}");
                }
            }
            json
        });
        running.push((name, child, reader));
    }
    let mut results = Vec::new();
    for (name, mut child, reader) in running {
        let status = child.wait().map_err(|e| format!("soak {name}: wait: {e}"))?;
        let json = reader.join().ok().flatten();
        results.push((name, status, json));
    }
    print_summary(&results);
    let failed: Vec<String> = results
        .iter()
        .filter(|(_, status, json)| !status.success() || json.is_none())
        .map(|(name, status, json)| match json {
            Some(j) => format!(
                "soak load on {name}: {status}: flat={} lost={} running_after_drain={} errors={}",
                field(j, "flat"),
                field(j, "lost"),
                field(j, "running_after_drain"),
                field(j, "errors")
            ),
            None => format!("soak load on {name}: {status} before it reported"),
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("\n  "))
    }
}

/// The value of `"key":` in a flat JSON object line (the soak binary's report), or `?`.
fn field<'a>(json: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\":");
    json.find(&pat)
        .map(|i| &json[i + pat.len()..])
        .and_then(|rest| rest.split([',', '}']).next())
        .map_or("?", |v| v.trim_matches('"'))
}

fn mb(kb: &str) -> String {
    kb.parse::<f64>().map_or_else(|_| "?".to_string(), |k| format!("{:.1}", k / 1024.0))
}

fn print_summary(results: &[(&str, std::process::ExitStatus, Option<String>)]) {
    println!("\n==> soak load summary (first window peak -> last window peak; completed includes purged, removed is dead and failed jobs cleaned)");
    println!(
        "{:<9} {:>6} {:>16} {:>10} {:>8} {:>5} {:>9} {:>9} {:>6} {:>6} {:>7} {:>7} {:>4}  verdict",
        "store",
        "secs",
        "rss MB",
        "fds",
        "conns",
        "flat",
        "enqueued",
        "completed",
        "dead",
        "failed",
        "removed",
        "pending",
        "lost"
    );
    for (name, status, json) in results {
        let Some(j) = json else {
            println!("{name:<9} exited {status} without a report");
            continue;
        };
        let completed = field(j, "completed").parse::<u64>().unwrap_or(0)
            + field(j, "purged").parse::<u64>().unwrap_or(0);
        println!(
            "{:<9} {:>6} {:>16} {:>10} {:>8} {:>5} {:>9} {:>9} {:>6} {:>6} {:>7} {:>7} {:>4}  {}",
            field(j, "store"),
            field(j, "secs"),
            format!("{} -> {}", mb(field(j, "rss_kb_first")), mb(field(j, "rss_kb_last"))),
            format!("{} -> {}", field(j, "fds_first"), field(j, "fds_last")),
            format!("{} -> {}", field(j, "conns_first"), field(j, "conns_last")),
            field(j, "flat"),
            field(j, "enqueued"),
            completed,
            field(j, "dead"),
            field(j, "failed"),
            field(j, "cleaned"),
            field(j, "pending_at_stop"),
            field(j, "lost"),
            if status.success() { "ok" } else { "FAILED" }
        );
    }
    for (_, _, json) in results {
        if let Some(j) = json {
            println!("{j}");
        }
    }
}

/// `cargo test --release` of one flexiq-testkit test file, printing as it goes; `filter` goes
/// to the test binary (a test name and its flags).
fn testkit_release_test(file: &str, filter: &[&str]) -> Command {
    let mut args = vec!["test", "--release", "-p", "flexiq-testkit", "--all-features", "--test", file, "--"];
    args.extend_from_slice(filter);
    args.push("--nocapture");
    cargo(&args)
}

/// The long forms of the seeded simulation campaigns and the crash campaigns, per store.
fn campaigns(stores: &[BenchStore]) -> Vec<(String, Result<(), String>)> {
    let mut out = Vec::new();
    for store in stores {
        let (test, seeds) = match store {
            BenchStore::Sqlite => ("campaign_sqlite", "20000"),
            BenchStore::Pg => ("campaign_postgres", "3000"),
            BenchStore::Redis => ("campaign_redis", "3000"),
        };
        let label = format!("seeded campaign {test} ({seeds} seeds from 2000)");
        let mut cmd = testkit_release_test(test, &[]);
        cmd.env("FLEXIQ_SEED_START", "2000").env("FLEXIQ_SEEDS", seeds);
        let result = run(&label, &mut cmd);
        out.push((label, result));
    }
    let label = "crash campaigns (20,000 jobs, 20 kills, 4 restarts, 4 drops per store)".to_string();
    if !root().join(CRASH_CAMPAIGN).exists() {
        out.push((
            label,
            Err(format!("crash campaigns missing: {CRASH_CAMPAIGN} does not exist, so none ran")),
        ));
        return out;
    }
    for store in stores {
        let test = match store {
            BenchStore::Sqlite => "crash_sqlite",
            BenchStore::Pg => "crash_postgres",
            BenchStore::Redis => "crash_redis",
        };
        let label = format!("crash campaign {test} (20,000 jobs, 20 kills, 4 restarts, 4 drops)");
        let mut cmd = testkit_release_test("crash_campaign", &[test, "--exact"]);
        cmd.env("FLEXIQ_CRASH_JOBS", "20000")
            .env("FLEXIQ_CRASH_KILLS", "20")
            .env("FLEXIQ_CRASH_RESTARTS", "4")
            .env("FLEXIQ_CRASH_DROPS", "4");
        let result = run(&label, &mut cmd).and_then(|()| ran_one_test(test));
        out.push((label, result));
    }
    out
}

/// Checks that the crash campaign file still holds the test `name` (a filter matching nothing
/// would pass with zero tests run).
fn ran_one_test(name: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(root().join(CRASH_CAMPAIGN))
        .map_err(|e| format!("read {CRASH_CAMPAIGN}: {e}"))?;
    if text.contains(&format!("fn {name}(")) {
        Ok(())
    } else {
        Err(format!("{CRASH_CAMPAIGN} has no test {name}, so it did not run"))
    }
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_are_read_from_the_report_line() {
        let j = r#"{"store":"sqlite","secs":120,"flat":true,"lost":0}"#;
        assert_eq!(field(j, "store"), "sqlite");
        assert_eq!(field(j, "secs"), "120");
        assert_eq!(field(j, "lost"), "0");
        assert_eq!(field(j, "missing"), "?");
    }
}
