//! A campaign: many seeds against one backing, each in a namespace of its own, with the
//! failing seeds printed as they fail and reported in full at the end.
//!
//! The seeds come from the environment so one test serves CI's short form, a long soak and
//! the replay of one failure:
//!
//! - `FLEXIQ_SEED=<n>` runs seed `n` alone and prints its report (trace included) even when it
//!   passes;
//! - `FLEXIQ_SEEDS=<count>` runs that many seeds, starting at `FLEXIQ_SEED_START` (default 0);
//! - otherwise the test's own count runs, from 0.

use std::time::{Duration, Instant};

use crate::backing::Backing;
use crate::fault::Fault;
use crate::sim::{run_seed, SeedRun, SimOptions};

/// Failing seeds whose full report a campaign prints.
const FULL_REPORTS: usize = 3;

/// Which seeds to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Campaign {
    /// The first seed.
    pub start: u64,
    /// How many seeds, `start` onwards.
    pub count: u64,
    /// Whether to print every seed's report, passing or not (a single-seed replay).
    pub verbose: bool,
    /// What the seeds may do.
    pub options: SimOptions,
}

impl Campaign {
    /// `count` seeds from 0, unless the environment says otherwise (see the module docs).
    ///
    /// # Panics
    ///
    /// When a variable is set but is not a number.
    pub fn from_env(count: u64) -> Self {
        let read = |name: &str| {
            std::env::var(name).ok().map(|v| {
                v.trim().parse::<u64>().unwrap_or_else(|_| panic!("{name}={v:?} is not a whole number"))
            })
        };
        if let Some(seed) = read("FLEXIQ_SEED") {
            return Campaign { start: seed, count: 1, verbose: true, options: SimOptions::default() };
        }
        let start = read("FLEXIQ_SEED_START").unwrap_or(0);
        Campaign {
            start,
            count: read("FLEXIQ_SEEDS").unwrap_or(count),
            verbose: false,
            options: SimOptions::default(),
        }
    }

    /// The same seeds, but no producer re-sends an enqueue with the same ids (see
    /// [`SimOptions::resend_same_ids`]).
    pub fn without_same_id_resends(mut self) -> Self {
        self.options.resend_same_ids = false;
        self
    }

    /// Runs every seed on `backing`, one after another, each on a fresh namespace.
    pub async fn run(&self, backing: &dyn Backing) -> CampaignReport {
        let nonce = uuid::Uuid::new_v4().as_u128();
        let tag = format!("{:08x}", nonce as u32);
        let started = Instant::now();
        let mut report = CampaignReport { backend: backing.name(), ..CampaignReport::default() };
        for seed in self.start..self.start.saturating_add(self.count) {
            let salt = (nonce >> 64) as u64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let run = match backing.namespace(&format!("seed{seed}-{tag}")) {
                Ok(store) => run_seed(store, seed, salt, &self.options).await,
                Err(e) => panic!("{} backing cannot open a namespace for seed {seed}: {e}", backing.name()),
            };
            report.add(&run);
            if self.verbose {
                eprintln!("{}", run.report());
            }
            if !run.passed() {
                eprintln!("{} seed {seed} FAILED: {}", backing.name(), run.violations.join(" | "));
                report.failed.push(run);
            }
        }
        report.elapsed = started.elapsed();
        report
    }
}

/// What a campaign ran and found.
#[derive(Debug, Clone, Default)]
pub struct CampaignReport {
    /// The backend.
    pub backend: &'static str,
    /// Seeds run.
    pub seeds: u64,
    /// Jobs sent, over every seed.
    pub jobs: usize,
    /// Handler runs, over every seed.
    pub executions: usize,
    /// Faults injected, over every seed.
    pub injections: usize,
    /// Calls failed before reaching the store.
    pub failed_before: usize,
    /// Calls the store applied whose reply was then lost.
    pub lost_replies: usize,
    /// Calls delayed.
    pub delays: usize,
    /// The seeds that broke an invariant.
    pub failed: Vec<SeedRun>,
    /// Wall time of the whole campaign.
    pub elapsed: Duration,
}

impl CampaignReport {
    fn add(&mut self, run: &SeedRun) {
        self.seeds += 1;
        self.jobs += run.jobs;
        self.executions += run.executions;
        self.injections += run.injections.len();
        for i in &run.injections {
            match i.fault {
                Fault::FailBefore { .. } => self.failed_before += 1,
                Fault::FailAfter { .. } if i.committed == Some(true) => self.lost_replies += 1,
                Fault::Delay { .. } => self.delays += 1,
                _ => {}
            }
        }
    }

    /// One line: seeds, jobs, faults and time.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} seeds, {} failed; {} jobs, {} handler runs; {} faults injected ({} failed before \
             the store, {} lost replies of applied calls, {} delays); {:.1} s",
            self.backend,
            self.seeds,
            self.failed.len(),
            self.jobs,
            self.executions,
            self.injections,
            self.failed_before,
            self.lost_replies,
            self.delays,
            self.elapsed.as_secs_f64()
        )
    }

    /// Panics with the failing seeds (the first few in full) unless every seed passed.
    pub fn assert_passed(&self) {
        eprintln!("{}", self.summary());
        if self.failed.is_empty() {
            return;
        }
        let seeds: Vec<String> = self.failed.iter().map(|r| r.seed.to_string()).collect();
        let mut msg = format!("{}\nfailing seeds: {}\n", self.summary(), seeds.join(", "));
        for run in self.failed.iter().take(FULL_REPORTS) {
            msg.push_str(&run.report());
        }
        panic!("{msg}");
    }
}
