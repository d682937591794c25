//! `cargo xtask`: the project's tasks in one place, so CI and people run the same commands.
//!
//! `ci` is what `.ci/run` calls: format check, clippy, the services the store suites need,
//! every Rust test (each store's conformance suite included), a five-minute soak of every store,
//! the Python and Node suites, and short drains through each SDK checked for stalls (the short
//! form of `bench --drain-gaps`). `soak` is the long form of the reliability checks; `bench`
//! also puts the SDKs (`--sdk-overhead`, `--latency`) and the peers (`--peers`) side by side.

mod bench;
mod latency;
mod peers;
mod services;
mod soak;
mod steps;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "flexiq project tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum BenchStore {
    Sqlite,
    Pg,
    Redis,
}

#[derive(Subcommand)]
enum Task {
    /// Everything CI checks: fmt, clippy, services, Rust tests, a 5-minute soak, Python and Node,
    /// short drains through each SDK checked for stalls.
    Ci,
    /// Rust tests only (starts the services the store suites need).
    Test,
    /// Python SDK: build into a virtualenv and run pytest.
    Python,
    /// Node SDK: build the addon and run node --test and tsc.
    Node,
    /// Make sure PostgreSQL and Redis answer on loopback, starting or installing them if not.
    Services,
    /// Criterion benchmarks.
    Bench {
        /// Which store's benches (default: SQLite store and runtime).
        #[arg(long, value_enum)]
        store: Option<BenchStore>,
        /// The Python SDK benchmarks.
        #[arg(long)]
        py: bool,
        /// The Node SDK benchmarks.
        #[arg(long)]
        node: bool,
        /// An awaited single enqueue through Rust, Python and Node on each store, side by side.
        #[arg(long)]
        sdk_overhead: bool,
        /// Enqueue-to-handler-start at 100 jobs/s through Rust, Python and Node on each store,
        /// with the store's round trip of the same run as the baseline.
        #[arg(long)]
        latency: bool,
        /// Repeated short drains through each SDK at concurrency 1 and 8; fails when a run's
        /// longest gap between two handler starts is over 100 ms.
        #[arg(long)]
        drain_gaps: bool,
        /// flexiq beside BullMQ, huey and graphile-worker (installed under target/peers), the same four
        /// commands; downloads the peers, not for CI.
        #[arg(long)]
        peers: bool,
        /// Jobs per run of --sdk-overhead, --latency, --drain-gaps or --peers (each has its
        /// own default).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        jobs: Option<u64>,
        /// Runs per figure of those benchmarks; the median is reported.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
    },
    /// The README's main job: the demo on an embedded SQLite file.
    Demo,
    /// Build the Python wheel and the Node addon package into target/dist.
    Dist,
    /// Build the Rust API docs.
    Docs,
    /// A steady mixed load on each store with memory, connections and descriptors sampled
    /// every 10 s (flat or not, nothing lost), then the long seeded and crash campaigns.
    Soak {
        /// Minutes of load per store (the stores run side by side).
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
        minutes: u64,
        /// One store only (default: all three).
        #[arg(long, value_enum)]
        store: Option<BenchStore>,
        /// The load only, without the seeded and crash campaigns.
        #[arg(long)]
        skip_campaigns: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Ci => steps::ci(),
        Task::Test => services::ensure().and_then(|()| steps::rust_tests()),
        Task::Python => services::ensure().and_then(|()| steps::python()),
        Task::Node => services::ensure().and_then(|()| steps::node()),
        Task::Services => services::ensure(),
        Task::Bench { store, py, node, sdk_overhead, latency, drain_gaps, peers, jobs, runs } => {
            let plan = latency::SdkPlan {
                stores: store.map_or_else(|| bench::STORES.to_vec(), |s| vec![s]),
                jobs,
                runs,
            };
            if sdk_overhead {
                latency::sdk_overhead(&plan)
            } else if latency {
                latency::latency(&plan)
            } else if drain_gaps {
                latency::drain_gaps(&plan)
            } else if peers {
                peers::peers(&plan.stores, jobs, runs)
            } else {
                steps::bench(store, py, node)
            }
        }
        Task::Demo => steps::demo(),
        Task::Dist => steps::dist(),
        Task::Docs => steps::docs(),
        Task::Soak { minutes, store, skip_campaigns } => soak::soak(&soak::SoakPlan {
            secs: minutes * 60,
            stores: store
                .map_or_else(|| vec![BenchStore::Sqlite, BenchStore::Pg, BenchStore::Redis], |s| vec![s]),
            skip_campaigns,
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) use steps::BenchTarget;

impl From<BenchStore> for BenchTarget {
    fn from(s: BenchStore) -> Self {
        match s {
            BenchStore::Sqlite => BenchTarget::Sqlite,
            BenchStore::Pg => BenchTarget::Pg,
            BenchStore::Redis => BenchTarget::Redis,
        }
    }
}
