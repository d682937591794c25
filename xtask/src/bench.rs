//! What the side-by-side benchmarks share: the systems under test, an isolated store for each
//! run, and running one harness command as one process that prints one JSON line.
//!
//! Every system answers the same four commands (`enqueue-single`, `enqueue-batch`, `drain`,
//! `latency`; see `bench/driver/src/main.rs`): flexiq through Rust (`flexiq-bench`), Python
//! (`crates/flexiq-py/bench/driver.py`) and Node (`crates/flexiq-node/bench/driver.mjs`), and
//! the peers of `bench/peers`. Each run gets a store nobody else touches (a new SQLite file, a
//! new PostgreSQL schema, a new Redis key prefix) and removes it afterwards, so runs neither see
//! nor slow one another.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::steps::{cargo, root, run, target_dir};
use crate::BenchStore;

const PG_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL: &str = "redis://127.0.0.1:6379";

/// The three stores, in table order.
pub(crate) const STORES: [BenchStore; 3] = [BenchStore::Sqlite, BenchStore::Pg, BenchStore::Redis];

pub(crate) fn store_name(s: BenchStore) -> &'static str {
    match s {
        BenchStore::Sqlite => "sqlite",
        BenchStore::Pg => "postgres",
        BenchStore::Redis => "redis",
    }
}

/// One isolated store for one run; dropped, it removes what the run wrote.
pub(crate) struct RunStore {
    pub(crate) store: BenchStore,
    pub(crate) tag: String,
    dir: PathBuf,
}

impl RunStore {
    pub(crate) fn new(store: BenchStore) -> Result<Self, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let tag = format!("bench{}x{}x{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = target_dir().join("bench-stores").join(&tag);
        std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
        Ok(RunStore { store, tag, dir })
    }

    /// The flexiq URL of this store.
    pub(crate) fn url(&self) -> String {
        match self.store {
            BenchStore::Sqlite => format!("sqlite://{}", self.sqlite_path().display()),
            BenchStore::Pg => format!("{PG_URL}?schema={}", self.tag),
            BenchStore::Redis => format!("{REDIS_URL}?prefix={}", self.tag),
        }
    }

    /// The database file of an SQLite run (peers put theirs in the same folder).
    pub(crate) fn sqlite_path(&self) -> PathBuf {
        self.dir.join("jobs.db")
    }
}

impl Drop for RunStore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        match self.store {
            BenchStore::Sqlite => {}
            BenchStore::Pg => {
                let sql = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.tag);
                let _ = Command::new("psql")
                    .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-q", "-c", &sql])
                    .output();
            }
            BenchStore::Redis => {
                // flexiq's keys start `{tag`, a peer's with its own prefix holding the tag.
                let script = format!(
                    "redis-cli -h 127.0.0.1 -p 6379 --scan --pattern '*{}*' | xargs -r -n 500 redis-cli -h 127.0.0.1 -p 6379 UNLINK >/dev/null",
                    self.tag
                );
                let _ = Command::new("bash").arg("-c").arg(script).output();
            }
        }
    }
}

/// A system the harness drives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum System {
    Rust,
    Python,
    Node,
    BullMq,
    Huey,
    Graphile,
}

impl System {
    pub(crate) fn name(self) -> &'static str {
        match self {
            System::Rust => "flexiq-rust",
            System::Python => "flexiq-python",
            System::Node => "flexiq-node",
            System::BullMq => "bullmq",
            System::Huey => "huey",
            System::Graphile => "graphile-worker",
        }
    }
}

/// Where the built drivers are.
pub(crate) struct Drivers {
    rust: PathBuf,
    python: PathBuf,
    /// The throwaway folder the peers are installed in, when they are.
    pub(crate) peers: Option<PathBuf>,
}

/// The three flexiq SDK drivers in release builds: the Rust binary, the Python package in
/// the bench virtualenv, the Node addon.
pub(crate) fn build_sdks() -> Result<Drivers, String> {
    run("cargo build --release -p flexiq-bench", &mut cargo(&["build", "--release", "-p", "flexiq-bench"]))?;
    let venv = crate::steps::venv()?;
    crate::steps::maturin_develop(&venv, true)?;
    let node = root().join("crates/flexiq-node");
    if !node.join("node_modules").exists() {
        run(
            "npm install (builds the Node addon)",
            Command::new("npm").args(["install", "--no-audit", "--no-fund"]).current_dir(&node),
        )?;
    }
    run(
        "npm run build (Node addon, release)",
        Command::new("npm").args(["run", "build"]).current_dir(&node),
    )?;
    Ok(Drivers {
        rust: target_dir().join("release/flexiq-bench"),
        python: venv.join("bin/python"),
        peers: None,
    })
}

/// The drivers as CI has just built them (the Python package and the Node addon by their
/// suites' steps), with the Rust driver in a debug build: for checks that judge stalls, not
/// speed.
pub(crate) fn built_sdks() -> Result<Drivers, String> {
    run("cargo build -p flexiq-bench", &mut cargo(&["build", "-p", "flexiq-bench"]))?;
    let python = target_dir().join("py-venv/bin/python");
    if !python.exists() {
        return Err(format!("no Python package built in {}: run the Python step first", python.display()));
    }
    Ok(Drivers { rust: target_dir().join("debug/flexiq-bench"), python, peers: None })
}

/// The harness arguments of one command.
pub(crate) struct Cmd<'a> {
    pub(crate) name: &'a str,
    pub(crate) jobs: u64,
    pub(crate) concurrency: u32,
    pub(crate) rate: f64,
}

impl Cmd<'_> {
    fn args(&self, url: &str) -> Vec<String> {
        vec![
            self.name.to_string(),
            url.to_string(),
            "--jobs".into(),
            self.jobs.to_string(),
            "--concurrency".into(),
            self.concurrency.to_string(),
            "--rate".into(),
            self.rate.to_string(),
        ]
    }
}

/// Runs `cmd` through `system` on a fresh `store`; its JSON line.
pub(crate) fn measure(
    d: &Drivers,
    system: System,
    store: BenchStore,
    cmd: &Cmd<'_>,
) -> Result<Value, String> {
    let s = RunStore::new(store)?;
    let url = s.url();
    let mut c = match system {
        System::Rust => Command::new(&d.rust),
        System::Python => {
            let mut c = Command::new(&d.python);
            c.arg(root().join("crates/flexiq-py/bench/driver.py"));
            c
        }
        System::Node => {
            let mut c = Command::new("node");
            c.arg(root().join("crates/flexiq-node/bench/driver.mjs"));
            c
        }
        System::BullMq | System::Huey | System::Graphile => {
            let peers = d.peers.as_ref().ok_or("the peers are not installed")?;
            crate::peers::command(peers, system)?
        }
    };
    c.args(cmd.args(&url));
    let label = format!("{} {} on {}", system.name(), cmd.name, store_name(store));
    let out = c.output().map_err(|e| format!("{label}: cannot start: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{label} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line =
        stdout.lines().rev().find(|l| l.starts_with('{')).ok_or_else(|| format!("{label}: no JSON line"))?;
    let v: Value = serde_json::from_str(line).map_err(|e| format!("{label}: bad JSON line {line:?}: {e}"))?;
    eprintln!("  {line}");
    Ok(v)
}

/// A number field of a JSON line; `NaN` when absent.
pub(crate) fn field(v: &Value, name: &str) -> f64 {
    v.get(name).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

/// The median of `xs` (`NaN` for none).
pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The median of field `name` over `runs` runs of `cmd`, with every run's value.
pub(crate) fn median_of(
    d: &Drivers,
    system: System,
    store: BenchStore,
    cmd: &Cmd<'_>,
    runs: u32,
    name: &str,
) -> Result<(f64, Vec<Value>), String> {
    let mut lines = Vec::new();
    for _ in 0..runs {
        lines.push(measure(d, system, store, cmd)?);
    }
    Ok((median(lines.iter().map(|v| field(v, name)).collect()), lines))
}
