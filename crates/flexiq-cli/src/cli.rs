//! The command line grammar (clap derive): global options and one subcommand per group.
//!
//! Each group's own arguments live beside its implementation in `commands/` and `demo/`;
//! this file only assembles them, so `flexiq --help` reads as the table of contents.

use clap::{Args, Parser, Subcommand};

use crate::commands::{
    contract, dashboard, dedup, dlq, events, flow, jobs, queue, retention, schedulers, settings, task,
    workflow,
};
use crate::demo::DemoArgs;

/// flexiq: a durable job queue on SQLite, PostgreSQL or Redis.
#[derive(Debug, Parser)]
#[command(name = "flexiq", version, about, propagate_version = true, disable_help_subcommand = true)]
pub struct Cli {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes (before or after the subcommand).
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Store URL: sqlite:///abs/path.db, sqlite://rel.db, a file path, postgres://...?schema=s
    /// or redis://...?prefix=p. Defaults to the FLEXIQ_URL environment variable.
    #[arg(long, global = true, value_name = "URL")]
    pub url: Option<String>,
    /// Namespace to work in (default "default", or FLEXIQ_NAMESPACE).
    #[arg(long, global = true, value_name = "NAME")]
    pub namespace: Option<String>,
    /// Print JSON instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a mixed workload of thousands of jobs on an embedded SQLite file and report on it.
    Demo(DemoArgs),
    /// Job counts by status for every known queue.
    Stats {
        /// Only this queue.
        #[arg(long)]
        queue: Option<String>,
    },
    /// List, inspect and remove jobs; delay, promote and reprioritise one that has not started;
    /// a job's dependencies by outcome, and detaching a child.
    #[command(subcommand)]
    Jobs(jobs::JobsCmd),
    /// Flows: insert a tree of jobs across queues, parents waiting on their children.
    #[command(subcommand)]
    Flow(flow::FlowCmd),
    /// Dedup keys: who holds one, and freeing one.
    #[command(subcommand)]
    Dedup(dedup::DedupCmd),
    /// The dead-letter queue.
    #[command(subcommand)]
    Dlq(dlq::DlqCmd),
    /// Queue controls (pause, rate limits, caps, stall budget) and jobs in bulk (clean, drain,
    /// retry, promote, obliterate).
    #[command(subcommand)]
    Queue(queue::QueueCmd),
    /// Revoke and unrevoke task names: refuse or allow new enqueues of them.
    #[command(subcommand)]
    Task(task::TaskCmd),
    /// Force a stuck running job back to pending (only when its worker is dead or hung).
    Requeue {
        /// The job id.
        id: String,
    },
    /// Apply pending schema migrations and report what ran.
    Migrate,
    /// The storage contract floor.
    #[command(subcommand)]
    Contract(contract::ContractCmd),
    /// Retention: what a purge would delete, and what the cleaner applies.
    #[command(subcommand)]
    Retention(retention::RetentionCmd),
    /// The events stream: follow it, publish to it, trim it, switch it off or on.
    #[command(subcommand)]
    Events(events::EventsCmd),
    /// Job schedulers: list them, show one, remove one.
    #[command(subcommand)]
    Schedulers(schedulers::SchedulersCmd),
    /// The deployment-wide key/value settings.
    #[command(subcommand)]
    Settings(settings::SettingsCmd),
    /// Worker processes registered in the store and the jobs each runs now.
    Workers,
    /// Serve the web dashboard and its JSON API; manage its password and tokens.
    Dashboard(dashboard::DashboardArgs),
    /// Workflow runs: the job rows of a run, and cancelling a run.
    #[command(subcommand)]
    Workflow(workflow::WorkflowCmd),
}
