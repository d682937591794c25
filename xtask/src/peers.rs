//! `cargo xtask bench --peers`: flexiq beside BullMQ, graphile-worker and huey, driven by the
//! same four commands on the same machine in one run. Not part of CI: it downloads the peers.
//!
//! The peers are installed from their registries into a throwaway folder under the target
//! directory (`target/peers`: BullMQ and graphile-worker with npm, huey, redis-py and psycopg
//! with pip in a virtualenv), never into the repository; their drivers (`bench/peers/`) are
//! copied beside them so Node resolves `bullmq` and `graphile-worker` from there. BullMQ runs on
//! Redis, graphile-worker on PostgreSQL (its only store), huey on Redis, on SQLite (`SqliteHuey`)
//! and on PostgreSQL (`PostgresHuey`), flexiq on all three stores through each SDK.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bench::{build_sdks, field, measure, median, store_name, Cmd, System, STORES};
use crate::steps::{root, run, target_dir};
use crate::{services, BenchStore};

const BULLMQ: &str = "bullmq@5";
const GRAPHILE: &str = "graphile-worker@0.16";
const HUEY: [&str; 3] = ["huey>=3", "redis>=5", "psycopg[binary]>=3.2"];

/// Installs the peers (once; later runs reuse the folder) and returns it.
fn install() -> Result<PathBuf, String> {
    let dir = target_dir().join("peers");
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let node_peers = ["bullmq", "graphile-worker"];
    if !node_peers.iter().all(|p| dir.join("node_modules").join(p).exists()) {
        std::fs::write(dir.join("package.json"), "{\"private\": true, \"type\": \"module\"}\n")
            .map_err(|e| format!("write package.json in {}: {e}", dir.display()))?;
        run(
            "npm install BullMQ and graphile-worker (throwaway folder)",
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", BULLMQ, GRAPHILE])
                .current_dir(&dir),
        )?;
    }
    let venv = dir.join("venv");
    if !venv.join("bin/python").exists() {
        run("python venv for huey", Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        run(
            "pip install huey and redis (throwaway folder)",
            Command::new(venv.join("bin/pip"))
                .args(["install", "-q", "--disable-pip-version-check"])
                .args(HUEY),
        )?;
    }
    for script in ["harness.mjs", "bullmq.mjs", "graphile.mjs", "harness.py", "huey_driver.py"] {
        let from = root().join("bench/peers").join(script);
        std::fs::copy(&from, dir.join(script)).map_err(|e| format!("copy {}: {e}", from.display()))?;
    }
    Ok(dir)
}

/// The command that runs a peer's driver; the harness arguments are appended by the caller.
pub(crate) fn command(peers: &Path, system: System) -> Result<Command, String> {
    match system {
        System::BullMq => {
            let mut c = Command::new("node");
            c.arg(peers.join("bullmq.mjs"));
            Ok(c)
        }
        System::Graphile => {
            let mut c = Command::new("node");
            c.arg(peers.join("graphile.mjs"));
            Ok(c)
        }
        System::Huey => {
            let mut c = Command::new(peers.join("venv/bin/python"));
            c.arg(peers.join("huey_driver.py"));
            Ok(c)
        }
        other => Err(format!("{} is not a peer", other.name())),
    }
}

fn systems(store: BenchStore) -> Vec<System> {
    let mut s = vec![System::Rust, System::Python, System::Node];
    match store {
        BenchStore::Sqlite => s.push(System::Huey),
        BenchStore::Pg => s.extend([System::Graphile, System::Huey]),
        BenchStore::Redis => s.extend([System::BullMq, System::Huey]),
    }
    s
}

/// The four commands through every system on every store; a table of medians.
pub(crate) fn peers(stores: &[BenchStore], jobs: Option<u64>, runs: u32) -> Result<(), String> {
    services::ensure()?;
    let mut d = build_sdks()?;
    d.peers = Some(install()?);
    let jobs = jobs.unwrap_or(20_000);
    let cmds = [
        ("enqueue-single", Cmd { name: "enqueue-single", jobs, concurrency: 1, rate: 100.0 }, "rate"),
        ("enqueue-batch", Cmd { name: "enqueue-batch", jobs, concurrency: 1, rate: 100.0 }, "rate"),
        ("drain c=1", Cmd { name: "drain", jobs, concurrency: 1, rate: 100.0 }, "rate"),
        ("drain c=8", Cmd { name: "drain", jobs, concurrency: 8, rate: 100.0 }, "rate"),
        ("latency p50", Cmd { name: "latency", jobs: 500, concurrency: 1, rate: 100.0 }, "p50_ms"),
    ];
    let mut table = Vec::new();
    for &store in stores.iter().filter(|s| STORES.contains(s)) {
        for system in systems(store) {
            let mut row = Vec::new();
            for (_, cmd, key) in &cmds {
                let mut lines = Vec::new();
                for _ in 0..runs {
                    lines.push(measure(&d, system, store, cmd)?);
                }
                let p99 = median(lines.iter().map(|v| field(v, "p99_ms")).collect());
                row.push((median(lines.iter().map(|v| field(v, key)).collect()), p99));
            }
            table.push((store, system, row));
        }
    }
    println!("\nSide by side, {jobs} no-op jobs (latency: 500 at 100/s), median of {runs} runs");
    print!("{:<9} {:<15}", "store", "system");
    for (label, _, _) in &cmds {
        print!(" {label:>15}");
    }
    println!(" {:>15}", "latency p99");
    for (store, system, row) in table {
        print!("{:<9} {:<15}", store_name(store), system.name());
        for (i, (v, _)) in row.iter().enumerate() {
            if i == row.len() - 1 {
                print!(" {:>12.3} ms", v);
            } else {
                print!(" {:>8.0} jobs/s", v);
            }
        }
        println!(" {:>12.3} ms", row.last().map_or(f64::NAN, |r| r.1));
    }
    Ok(())
}
