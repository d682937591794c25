//! The end state of a crash campaign, checked against what the workers wrote down.
//!
//! Must hold (asserted): every enqueued job is listed and terminal, nothing `running`, no job
//! completed twice (one success metric row and one `completed` event per completed job), no
//! job completed that never ran, stats match the listing, metrics and dead letters add up,
//! and a job dead-letters only once it used up its retries or stall budget.
//! Counted, not asserted: jobs executed more than once (an attempt cut by a kill, or whose
//! lease lapsed while the server was away, runs again: at-least-once), and retry or stall
//! budget charged without an execution (a claim into a killed worker's prefetch buffer that
//! never started, released as an attempt or a stall).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use flexiq_runtime::{EventKind, Job, JobFilter, JobId, JobStatus, Queue, Stats};

use super::{worker, Settings, Tally, MAX_RETRIES, STALL_BUDGET};

/// One execution as its worker wrote it down.
#[derive(Debug, Clone, Copy)]
struct Execution {
    pid: u32,
    claim_seq: u64,
}

/// The figures of one run, printed and returned.
#[derive(Debug, Default)]
pub(crate) struct Figures {
    pub(crate) store: &'static str,
    pub(crate) seed: u64,
    pub(crate) jobs: usize,
    pub(crate) kills: usize,
    pub(crate) server_restarts: usize,
    pub(crate) connection_drops: usize,
    pub(crate) connections_dropped: u64,
    pub(crate) unexpected_worker_exits: usize,
    pub(crate) executions: usize,
    pub(crate) executed_more_than_once: usize,
    pub(crate) reexecuted_after_kill: usize,
    pub(crate) reexecuted_otherwise: usize,
    pub(crate) attempts_spent_without_execution: u64,
    pub(crate) jobs_with_unexecuted_attempts: usize,
    pub(crate) attempts_recorded: u64,
    pub(crate) stalls_recorded: u64,
    pub(crate) claims_without_execution: u64,
    pub(crate) jobs_lost: usize,
    pub(crate) completions_twice: usize,
    pub(crate) left_running: usize,
    pub(crate) completed: u64,
    pub(crate) dead: u64,
    pub(crate) failed: u64,
    pub(crate) success_metric_rows: usize,
    pub(crate) failure_metric_rows: usize,
    pub(crate) dead_letters: usize,
    pub(crate) seconds: u64,
}

impl Figures {
    /// One line of JSON, for a soak runner to collect.
    pub(crate) fn json(&self) -> String {
        format!(
            concat!(
                "{{\"store\":\"{}\",\"seed\":{},\"jobs\":{},\"kills\":{},\"server_restarts\":{},",
                "\"connection_drops\":{},\"connections_dropped\":{},\"unexpected_worker_exits\":{},",
                "\"executions\":{},\"executed_more_than_once\":{},\"reexecuted_after_kill\":{},",
                "\"reexecuted_otherwise\":{},\"attempts_spent_without_execution\":{},",
                "\"jobs_with_unexecuted_attempts\":{},\"attempts_recorded\":{},\"stalls_recorded\":{},",
                "\"claims_without_execution\":{},\"jobs_lost\":{},\"completions_twice\":{},",
                "\"left_running\":{},\"completed\":{},\"dead\":{},\"failed\":{},",
                "\"success_metric_rows\":{},\"failure_metric_rows\":{},\"dead_letters\":{},\"seconds\":{}}}"
            ),
            self.store,
            self.seed,
            self.jobs,
            self.kills,
            self.server_restarts,
            self.connection_drops,
            self.connections_dropped,
            self.unexpected_worker_exits,
            self.executions,
            self.executed_more_than_once,
            self.reexecuted_after_kill,
            self.reexecuted_otherwise,
            self.attempts_spent_without_execution,
            self.jobs_with_unexecuted_attempts,
            self.attempts_recorded,
            self.stalls_recorded,
            self.claims_without_execution,
            self.jobs_lost,
            self.completions_twice,
            self.left_running,
            self.completed,
            self.dead,
            self.failed,
            self.success_metric_rows,
            self.failure_metric_rows,
            self.dead_letters,
            self.seconds,
        )
    }

    fn print(&self, restarts: &[&'static str]) {
        println!("crash campaign figures ({}, seed {}):", self.store, self.seed);
        println!("  jobs                                        {}", self.jobs);
        println!("  worker kills (SIGKILL)                      {}", self.kills);
        println!("  server restarts                             {} {restarts:?}", self.server_restarts);
        println!(
            "  connection drops                            {} ({} connections)",
            self.connection_drops, self.connections_dropped
        );
        println!("  worker exits not caused by the campaign     {}", self.unexpected_worker_exits);
        println!("  executions                                  {}", self.executions);
        println!(
            "  jobs executed more than once                {} ({} after a kill, {} otherwise)",
            self.executed_more_than_once, self.reexecuted_after_kill, self.reexecuted_otherwise
        );
        println!(
            "  attempts/stalls charged without execution   {} (on {} jobs)",
            self.attempts_spent_without_execution, self.jobs_with_unexecuted_attempts
        );
        println!(
            "  attempts / stalls / claims never executed   {} / {} / {}",
            self.attempts_recorded, self.stalls_recorded, self.claims_without_execution
        );
        println!("  jobs lost                                   {}", self.jobs_lost);
        println!("  completions recorded twice                  {}", self.completions_twice);
        println!("  left running                                {}", self.left_running);
        println!(
            "  completed / dead / failed                   {} / {} / {}",
            self.completed, self.dead, self.failed
        );
        println!(
            "  metric rows success / failure               {} / {}",
            self.success_metric_rows, self.failure_metric_rows
        );
        println!("  dead letters                                {}", self.dead_letters);
        println!("  seconds                                     {}", self.seconds);
        println!("CRASH_SUMMARY {}", self.json());
    }
}

/// Retries a read a few times: the store's server may have just come back.
macro_rules! read {
    ($what:expr, $call:expr) => {{
        let mut tries = 0;
        loop {
            match $call.await {
                Ok(v) => break v,
                Err(e) if tries < 20 => {
                    tries += 1;
                    eprintln!("{} failed (retrying): {e}", $what);
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Err(e) => panic!("{}: {e}", $what),
            }
        }
    }};
}

/// Checks the end state, prints the figures and panics with every violation found.
pub(crate) async fn check(
    store: &'static str,
    q: &Queue,
    enqueued: &[JobId],
    dir: &Path,
    settings: &Settings,
    tally: &Tally,
    started: Instant,
) -> Figures {
    let mut violations: Vec<String> = Vec::new();
    let mut f = Figures {
        store,
        seed: settings.seed,
        jobs: settings.jobs,
        kills: tally.kills,
        server_restarts: tally.restarts.len(),
        connection_drops: tally.drops,
        connections_dropped: tally.connections_dropped,
        unexpected_worker_exits: tally.unexpected_exits,
        ..Default::default()
    };

    let jobs = list_all(q).await;
    let executions = read_executions(dir);
    f.executions = executions.values().map(Vec::len).sum();

    // Lost and unknown jobs.
    let sent: HashSet<&str> = enqueued.iter().map(JobId::as_str).collect();
    let lost: Vec<&str> = sent.iter().copied().filter(|id| !jobs.contains_key(*id)).collect();
    f.jobs_lost = lost.len();
    if !lost.is_empty() {
        violations.push(format!("{} jobs lost (enqueued, not listed): {:?}", lost.len(), first(&lost)));
    }
    let unknown: Vec<&str> = jobs.keys().map(String::as_str).filter(|id| !sent.contains(id)).collect();
    if !unknown.is_empty() {
        violations.push(format!("{} listed jobs nobody enqueued: {:?}", unknown.len(), first(&unknown)));
    }

    // Every job terminal; stats match the listing.
    let mut listed = Stats::default();
    for job in jobs.values() {
        listed.add(job.status, 1);
    }
    f.left_running = listed.running as usize;
    let unfinished: Vec<String> = jobs
        .values()
        .filter(|j| !matches!(j.status, JobStatus::Completed | JobStatus::Dead | JobStatus::Failed))
        .map(|j| format!("{} {:?} attempt {}", j.id.as_str(), j.status, j.attempt))
        .collect();
    if !unfinished.is_empty() {
        violations.push(format!(
            "{} jobs not completed or dead-lettered: {:?}",
            unfinished.len(),
            first(&unfinished)
        ));
    }
    let stats = read!("stats", q.stats());
    if stats != listed {
        violations.push(format!("stats {stats:?} differ from the listing's counts {listed:?}"));
    }
    let queue_stats = read!("queue stats", q.stats_for_queue(worker::QUEUE));
    if queue_stats != listed {
        violations.push(format!(
            "stats of queue {} {queue_stats:?} differ from the listing {listed:?}",
            worker::QUEUE
        ));
    }
    (f.completed, f.dead, f.failed) = (listed.completed, listed.dead, listed.failed);

    check_completions(q, &jobs, &executions, &mut f, &mut violations).await;
    check_dead(q, &jobs, &mut f, &mut violations).await;

    // Executions: re-runs, and attempts that never ran.
    for (id, runs) in &executions {
        if runs.len() > 1 {
            f.executed_more_than_once += 1;
            let mut runs = runs.clone();
            runs.sort_by_key(|r| r.claim_seq);
            if runs[..runs.len() - 1].iter().all(|r| tally.killed_pids.contains(&r.pid)) {
                f.reexecuted_after_kill += 1;
            } else {
                f.reexecuted_otherwise += 1;
            }
        }
        if !jobs.contains_key(id) {
            violations.push(format!("job {id} was executed but is not listed"));
        }
    }
    for job in jobs.values() {
        let ran = executions.get(job.id.as_str()).map_or(0, Vec::len) as u64;
        // Each execution ends in the attempt that counts or in a stall; a charge beyond
        // them (attempts plus stalls) was for a claim that never ran.
        f.attempts_recorded += u64::from(job.attempt);
        f.stalls_recorded += u64::from(job.stall_count);
        f.claims_without_execution += job.claim_seq.saturating_sub(ran);
        let spent = (u64::from(job.attempt) + u64::from(job.stall_count)).saturating_sub(ran);
        if spent > 0 {
            f.attempts_spent_without_execution += spent;
            f.jobs_with_unexecuted_attempts += 1;
        }
    }

    if tally.kills < settings.kills {
        violations.push(format!("only {} of {} kills happened", tally.kills, settings.kills));
    }
    if tally.restarts.len() < settings.restarts || tally.drops < settings.drops {
        violations.push(format!(
            "only {} of {} restarts and {} of {} connection drops happened",
            tally.restarts.len(),
            settings.restarts,
            tally.drops,
            settings.drops
        ));
    }
    f.seconds = started.elapsed().as_secs();
    f.print(&tally.restarts);
    assert!(
        violations.is_empty(),
        "crash campaign on {store} (FLEXIQ_CRASH_SEED={}) broke {} invariants:\n  {}",
        settings.seed,
        violations.len(),
        violations.join("\n  ")
    );
    f
}

/// One success metric row and one `completed` event per completed job, none for the rest,
/// and an execution recorded for each.
async fn check_completions(
    q: &Queue,
    jobs: &HashMap<String, Job>,
    executions: &HashMap<String, Vec<Execution>>,
    f: &mut Figures,
    violations: &mut Vec<String>,
) {
    let rows = read!("metrics", q.get_metrics(0, Some(worker::TASK)));
    let mut successes: HashMap<&str, usize> = HashMap::new();
    for r in &rows {
        if r.success {
            f.success_metric_rows += 1;
            *successes.entry(r.job_id.as_str()).or_default() += 1;
        } else {
            f.failure_metric_rows += 1;
        }
    }
    let events = read_events(q).await;
    let mut twice: HashSet<&str> = HashSet::new();
    let mut wrong: Vec<String> = Vec::new();
    for job in jobs.values() {
        let id = job.id.as_str();
        let completed = job.status == JobStatus::Completed;
        let rows = successes.get(id).copied().unwrap_or(0);
        let ev = events.get(id).copied().unwrap_or_default();
        if rows > 1 || ev.completed > 1 {
            twice.insert(id);
        }
        let want = usize::from(completed);
        if rows != want || ev.completed != want {
            wrong.push(format!(
                "{id} {:?}: {rows} success rows, {} completed events",
                job.status, ev.completed
            ));
        }
        if ev.terminal_other != usize::from(matches!(job.status, JobStatus::Dead | JobStatus::Failed)) {
            wrong.push(format!("{id} {:?}: {} dead/failed/cancelled events", job.status, ev.terminal_other));
        }
        if completed && !executions.contains_key(id) {
            violations.push(format!("job {id} completed without an execution recorded"));
        }
    }
    f.completions_twice = twice.len();
    if !twice.is_empty() {
        violations.push(format!(
            "{} jobs completed twice: {:?}",
            twice.len(),
            first(&twice.into_iter().collect::<Vec<_>>())
        ));
    }
    if !wrong.is_empty() {
        violations.push(format!(
            "{} jobs whose metrics or events disagree with their status: {:?}",
            wrong.len(),
            first(&wrong)
        ));
    }
    if f.success_metric_rows as u64 != f.completed {
        violations.push(format!(
            "{} success metric rows for {} completed jobs",
            f.success_metric_rows, f.completed
        ));
    }
}

/// Dead letters match the dead jobs, each of which used up its retries or stall budget.
async fn check_dead(q: &Queue, jobs: &HashMap<String, Job>, f: &mut Figures, violations: &mut Vec<String>) {
    let mut after: Option<String> = None;
    let mut letters = Vec::new();
    loop {
        let page = read!("dead letters", q.dead_letters_after(10_000, after.as_deref()));
        letters.extend(page.items);
        match page.next_cursor {
            Some(c) => after = Some(c),
            None => break,
        }
    }
    f.dead_letters = letters.len();
    if letters.len() as u64 != f.dead {
        violations.push(format!("{} dead letters for {} dead jobs", letters.len(), f.dead));
    }
    for letter in &letters {
        match jobs.get(&letter.original_job_id) {
            Some(job) if job.status == JobStatus::Dead => {
                let exhausted = job.attempt > MAX_RETRIES || i64::from(job.stall_count) > STALL_BUDGET;
                if !exhausted {
                    violations.push(format!(
                        "job {} dead-lettered with budget left: attempt {}, stalls {}, error {:?}",
                        job.id.as_str(),
                        job.attempt,
                        job.stall_count,
                        letter.error
                    ));
                }
            }
            other => violations.push(format!(
                "dead letter {} names job {} whose status is {:?}",
                letter.id,
                letter.original_job_id,
                other.map(|j| j.status)
            )),
        }
    }
}

/// Every job of the namespace, by id.
async fn list_all(q: &Queue) -> HashMap<String, Job> {
    let mut jobs = HashMap::new();
    let mut after: Option<String> = None;
    loop {
        let page = read!("list jobs", q.list_jobs_after(&JobFilter::default(), 10_000, after.as_deref()));
        for job in page.items {
            let id = job.id.as_str().to_string();
            assert!(jobs.insert(id.clone(), job).is_none(), "job {id} listed twice");
        }
        match page.next_cursor {
            Some(c) => after = Some(c),
            None => break,
        }
    }
    jobs
}

/// Terminal events of one job.
#[derive(Debug, Default, Clone, Copy)]
struct JobEvents {
    completed: usize,
    terminal_other: usize,
}

/// Terminal events per job over the whole stream.
async fn read_events(q: &Queue) -> HashMap<String, JobEvents> {
    let mut per_job: HashMap<String, JobEvents> = HashMap::new();
    let mut after: Option<String> = None;
    loop {
        let batch = read!("read events", q.read_events(after.as_deref(), 0, 10_000));
        let Some(last) = batch.last() else { break };
        after = Some(last.id.clone());
        for ev in batch {
            let Some(id) = ev.job_id else { continue };
            let e = per_job.entry(id).or_default();
            match ev.kind {
                EventKind::Completed => e.completed += 1,
                EventKind::Dead | EventKind::Failed | EventKind::Cancelled => e.terminal_other += 1,
                _ => {}
            }
        }
    }
    per_job
}

/// Every execution in the workers' logs, by job id.
fn read_executions(dir: &Path) -> HashMap<String, Vec<Execution>> {
    let mut out: HashMap<String, Vec<Execution>> = HashMap::new();
    let mut torn = 0;
    for entry in std::fs::read_dir(dir).expect("the campaign dir").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix("exec-").and_then(|n| n.strip_suffix(".log")) else { continue };
        let pid: u32 = pid.parse().expect("a pid in an execution log's name");
        let text = std::fs::read_to_string(entry.path()).expect("an execution log");
        for line in text.split_inclusive('\n') {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match (line.ends_with('\n'), fields.as_slice()) {
                (true, [id, _attempt, seq]) => out
                    .entry((*id).to_string())
                    .or_default()
                    .push(Execution { pid, claim_seq: seq.parse().expect("a claim sequence number") }),
                _ => torn += 1,
            }
        }
    }
    assert_eq!(torn, 0, "torn lines in the execution logs of {}", worker_list(dir));
    out
}

fn worker_list(dir: &Path) -> String {
    let names: BTreeMap<String, ()> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().to_string(), ()))
        .collect();
    names.into_keys().collect::<Vec<_>>().join(", ")
}

/// The first few of a list, for a message.
fn first<T: std::fmt::Debug>(items: &[T]) -> String {
    format!("{:?}{}", &items[..items.len().min(10)], if items.len() > 10 { " ..." } else { "" })
}
