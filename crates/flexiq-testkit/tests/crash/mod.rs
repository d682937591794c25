//! The crash campaign: enqueue a batch of jobs, let three worker processes drain it while
//! some of them are killed with SIGKILL at random points (each replaced at once), the store's
//! private server is restarted and every client connection dropped, then check the end state
//! against the executions the workers wrote down (see `check`).
//!
//! The disruptions are placed on the drain's progress (so many jobs finished), drawn from a
//! seed that is printed, so a run's schedule can be replayed; where in an attempt a kill lands
//! is up to the processes' timing.

pub(crate) mod check;
#[cfg(any(feature = "postgres", feature = "redis"))]
pub(crate) mod server;
pub(crate) mod worker;

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use flexiq_runtime::{connect, Backoff, ConnectOptions, EnqueueItem, EnqueueOptions, JobId, Queue, Stats};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use self::check::Figures;

/// Worker processes draining the queue at any time.
pub(crate) const WORKERS: usize = 3;
/// Retries each job may take: far more than kills and restarts can use up, so a dead letter
/// means a bug, not bad luck.
pub(crate) const MAX_RETRIES: u32 = 100;
/// Lapsed leases each job may recover from (the queue's stall budget).
pub(crate) const STALL_BUDGET: i64 = 1_000;
/// No job finishing for this long means the run is stuck; the campaign fails with the state.
const STUCK_AFTER: Duration = Duration::from_secs(240);

/// One run's size and disruptions, from the environment (`FLEXIQ_CRASH_*`) or the defaults.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Jobs enqueued (`FLEXIQ_CRASH_JOBS`).
    pub(crate) jobs: usize,
    /// Worker processes killed with SIGKILL (`FLEXIQ_CRASH_KILLS`, default 10).
    pub(crate) kills: usize,
    /// Server restarts, alternating clean and hard stops (`FLEXIQ_CRASH_RESTARTS`, default 2;
    /// SQLite has no server and takes none).
    pub(crate) restarts: usize,
    /// Rounds of dropping every client connection (`FLEXIQ_CRASH_DROPS`, default 2; none on
    /// SQLite).
    pub(crate) drops: usize,
    /// The schedule's seed (`FLEXIQ_CRASH_SEED`, default random).
    pub(crate) seed: u64,
}

fn env_num(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| panic!("{name}={v:?} is not a whole number")),
        Err(_) => default,
    }
}

impl Settings {
    /// The settings for a store with a server (`has_server`) or without, `jobs` by default.
    pub(crate) fn from_env(default_jobs: usize, has_server: bool) -> Self {
        let server_default = if has_server { 2 } else { 0 };
        let restarts = env_num("FLEXIQ_CRASH_RESTARTS", server_default) as usize;
        let drops = env_num("FLEXIQ_CRASH_DROPS", server_default) as usize;
        let settings = Settings {
            jobs: env_num("FLEXIQ_CRASH_JOBS", default_jobs as u64) as usize,
            kills: env_num("FLEXIQ_CRASH_KILLS", 10) as usize,
            restarts: if has_server { restarts } else { 0 },
            drops: if has_server { drops } else { 0 },
            seed: env_num("FLEXIQ_CRASH_SEED", rand::rng().random()),
        };
        assert!(settings.jobs >= 100, "FLEXIQ_CRASH_JOBS must be at least 100");
        settings
    }
}

/// A disruption of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Kill,
    Restart,
    DropConnections,
}

/// The disruptions, each at the number of finished jobs that sets it off, in order.
fn schedule(s: &Settings, rng: &mut ChaCha8Rng) -> VecDeque<(usize, Action)> {
    let n = s.jobs as f64;
    let mut plan = Vec::new();
    // Kills spread over 3%..92% of the drain, one in each equal slot, at a random point in it.
    let spread = |count: usize, from: f64, to: f64, rng: &mut ChaCha8Rng| -> Vec<usize> {
        let width = (to - from) / count.max(1) as f64;
        (0..count).map(|i| (n * (from + width * (i as f64 + rng.random::<f64>()))) as usize).collect()
    };
    plan.extend(spread(s.kills, 0.03, 0.92, rng).into_iter().map(|at| (at, Action::Kill)));
    plan.extend(spread(s.restarts, 0.2, 0.8, rng).into_iter().map(|at| (at, Action::Restart)));
    plan.extend(spread(s.drops, 0.1, 0.9, rng).into_iter().map(|at| (at, Action::DropConnections)));
    plan.sort_by_key(|(at, _)| *at);
    plan.into()
}

/// What happened to the run, for the report.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// SIGKILLs delivered.
    pub(crate) kills: usize,
    /// Processes killed (their executions may have been cut).
    pub(crate) killed_pids: HashSet<u32>,
    /// Server restarts, each with how it was stopped.
    pub(crate) restarts: Vec<&'static str>,
    /// Rounds of dropped connections.
    pub(crate) drops: usize,
    /// Connections closed by those rounds.
    pub(crate) connections_dropped: u64,
    /// Worker processes that exited without being killed or asked to stop.
    pub(crate) unexpected_exits: usize,
    /// Store calls of the campaign's own monitoring that failed (during restarts).
    pub(crate) monitor_errors: usize,
}

/// Runs one campaign on `url` (with `server` to restart, for PostgreSQL and Redis) and
/// checks it; panics with every violation found.
pub(crate) async fn run(
    store: &'static str,
    url: String,
    mut server: Option<Box<dyn server_control::Control>>,
    settings: Settings,
) -> Figures {
    println!(
        "crash campaign on {store}: {settings:?} (replay the schedule with FLEXIQ_CRASH_SEED={})",
        settings.seed
    );
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("a temp dir for the campaign");
    let q = connect(&url, ConnectOptions::default()).await.unwrap_or_else(|e| panic!("connect {url}: {e}"));
    q.set_queue_max_stalled(worker::QUEUE, STALL_BUDGET).await.unwrap();
    let ids = enqueue(&q, settings.jobs).await;

    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    let mut plan = schedule(&settings, &mut rng);
    let mut tally = Tally::default();
    let mut workers: Vec<Child> = (0..WORKERS).map(|_| worker::spawn(&url, dir.path())).collect();
    let mut last = (0usize, Instant::now());
    loop {
        tokio::time::sleep(Duration::from_millis(50)).await;
        respawn_exited(&mut workers, &url, dir.path(), &mut tally);
        let stats = match q.stats().await {
            Ok(s) => s,
            Err(e) => {
                tally.monitor_errors += 1;
                if last.1.elapsed() > STUCK_AFTER {
                    panic!("{store}: the store has answered no stats since {:?}: {e}", last.1);
                }
                continue;
            }
        };
        let done = finished(&stats);
        while plan.front().is_some_and(|(at, _)| *at <= done) {
            let (_, action) = plan.pop_front().expect("a planned action");
            match action {
                Action::Kill => kill_one(&mut workers, &url, dir.path(), &mut rng, &mut tally).await,
                Action::Restart => restart(&mut server, &mut tally),
                Action::DropConnections => drop_connections(&mut server, &mut tally),
            }
        }
        if plan.is_empty() && done >= settings.jobs && stats.pending + stats.running + stats.waiting == 0 {
            break;
        }
        if done != last.0 {
            last = (done, Instant::now());
        } else if last.1.elapsed() > STUCK_AFTER {
            stop_workers(&mut workers, dir.path());
            panic!(
                "{store}: no job finished for {STUCK_AFTER:?} at {done} of {} finished, stats {stats:?}, \
                 {} disruptions still planned, tally {tally:?}{}",
                settings.jobs,
                plan.len(),
                output_tails(dir.path())
            );
        }
    }
    stop_workers(&mut workers, dir.path());
    let figures = check::check(store, &q, &ids, dir.path(), &settings, &tally, started).await;
    let _ = q.close().await;
    figures
}

/// The trait objects the campaign restarts; an alias so SQLite builds without the servers.
pub(crate) mod server_control {
    #[cfg(any(feature = "postgres", feature = "redis"))]
    pub(crate) use super::server::ServerControl as Control;

    /// Without a server feature there is nothing to restart.
    #[cfg(not(any(feature = "postgres", feature = "redis")))]
    pub(crate) trait Control: Send {
        /// Never called: SQLite runs take no restarts.
        fn restart(&mut self, crash: bool) -> Result<&'static str, String>;
        /// Never called: SQLite runs take no connection drops.
        fn drop_connections(&mut self) -> Result<u64, String>;
    }
}

fn finished(s: &Stats) -> usize {
    (s.completed + s.failed + s.dead + s.cancelled) as usize
}

async fn enqueue(q: &Queue, n: usize) -> Vec<JobId> {
    let mut ids = Vec::with_capacity(n);
    for start in (0..n).step_by(1_000) {
        let items = (start..(start + 1_000).min(n))
            .map(|i| EnqueueItem {
                task: worker::TASK.into(),
                payload: i.to_string().into_bytes(),
                options: EnqueueOptions {
                    queue: Some(worker::QUEUE.into()),
                    max_retries: Some(MAX_RETRIES),
                    backoff: Some(Backoff::NONE),
                    ..Default::default()
                },
            })
            .collect();
        ids.extend(q.enqueue_many(items).await.unwrap_or_else(|e| panic!("enqueue jobs {start}..: {e}")));
    }
    ids
}

/// Replaces worker processes that died on their own, counting them.
fn respawn_exited(workers: &mut [Child], url: &str, dir: &Path, tally: &mut Tally) {
    for w in workers.iter_mut() {
        if let Ok(Some(status)) = w.try_wait() {
            tally.unexpected_exits += 1;
            eprintln!("worker process {} exited on its own ({status}){}", w.id(), output_tail(dir, w.id()));
            *w = worker::spawn(url, dir);
        }
    }
}

async fn kill_one(workers: &mut [Child], url: &str, dir: &Path, rng: &mut ChaCha8Rng, tally: &mut Tally) {
    tokio::time::sleep(Duration::from_millis(rng.random_range(0..200))).await;
    let w = &mut workers[rng.random_range(0..WORKERS)];
    let pid = w.id();
    w.kill().unwrap_or_else(|e| panic!("SIGKILL worker {pid}: {e}"));
    w.wait().unwrap_or_else(|e| panic!("reap worker {pid}: {e}"));
    tally.kills += 1;
    tally.killed_pids.insert(pid);
    *w = worker::spawn(url, dir);
}

fn restart(server: &mut Option<Box<dyn server_control::Control>>, tally: &mut Tally) {
    let server = server.as_mut().expect("restarts are planned only for stores with a server");
    let crash = tally.restarts.len() % 2 == 1;
    let how = tokio::task::block_in_place(|| server.restart(crash)).unwrap_or_else(|e| panic!("{e}"));
    println!("  server restarted ({how})");
    tally.restarts.push(how);
}

fn drop_connections(server: &mut Option<Box<dyn server_control::Control>>, tally: &mut Tally) {
    let server = server.as_mut().expect("connection drops are planned only for stores with a server");
    let n = tokio::task::block_in_place(|| server.drop_connections()).unwrap_or_else(|e| panic!("{e}"));
    println!("  dropped {n} client connections");
    tally.drops += 1;
    tally.connections_dropped += n;
}

/// Asks the workers to stop through the stop file and waits for them (a minute at most, then
/// SIGKILL: the end-state check then finds what they left behind).
fn stop_workers(workers: &mut [Child], dir: &Path) {
    std::fs::write(worker::stop_file(dir), b"stop").expect("write the stop file");
    let deadline = Instant::now() + Duration::from_secs(60);
    for w in workers.iter_mut() {
        loop {
            match w.try_wait() {
                Ok(Some(_)) => break,
                _ if Instant::now() > deadline => {
                    eprintln!("worker {} did not stop in time; killing it", w.id());
                    let _ = w.kill();
                    let _ = w.wait();
                    break;
                }
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

/// Why a worker process stopped (its panic message, when it panicked) and the last lines it
/// printed.
fn output_tail(dir: &Path, pid: u32) -> String {
    let text = std::fs::read_to_string(worker::output_log(dir, pid)).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("  ")).collect();
    let panic = match lines.iter().position(|l| l.contains("panicked at")) {
        Some(i) => lines[i..(i + 2).min(lines.len())].join("\n"),
        None => String::new(),
    };
    format!(
        "\n--- worker {pid} output ---\n{panic}\n...\n{}",
        lines[lines.len().saturating_sub(8)..].join("\n")
    )
}

/// The last lines of every worker process's output.
fn output_tails(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if let Some(pid) = name.strip_prefix("worker-").and_then(|n| n.strip_suffix(".out")) {
            if let Ok(pid) = pid.parse() {
                out.push_str(&output_tail(dir, pid));
            }
        }
    }
    out
}
