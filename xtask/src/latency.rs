//! The SDK benchmarks that put Rust, Python and Node side by side on each store, in one run:
//!
//! - `--sdk-overhead`: an awaited single enqueue through each SDK, as a rate and the median
//!   call; Python and Node are reported against the Rust call on the same store.
//! - `--latency`: enqueue-to-handler-start at 100 jobs/s into an idle worker, p50 and p99, with
//!   the median awaited enqueue from Rust of the same run as the baseline (the store's round
//!   trip, which no SDK can beat).
//! - `--drain-gaps`: repeated short drains at concurrency 1 and 8 through each SDK, failing
//!   when any run's longest gap between two handler starts (every job already due) is over
//!   [`GAP_LIMIT_MS`]: the symptom of a worker that missed a wake-up and slept to its poll.

use crate::bench::{build_sdks, field, measure, median, median_of, store_name, Cmd, Drivers, System};
use crate::{services, BenchStore};

const SDKS: [System; 3] = [System::Rust, System::Python, System::Node];

/// The longest allowed pause between two handler starts while jobs are due (ms).
pub(crate) const GAP_LIMIT_MS: f64 = 100.0;

/// Which stores and how much work.
pub(crate) struct SdkPlan {
    pub(crate) stores: Vec<BenchStore>,
    /// Jobs per run (each task has its own default).
    pub(crate) jobs: Option<u64>,
    /// Runs per figure; the median is reported.
    pub(crate) runs: u32,
}

fn prepare(plan: &SdkPlan) -> Result<Drivers, String> {
    if plan.stores.iter().any(|s| !matches!(s, BenchStore::Sqlite)) {
        services::ensure()?;
    }
    build_sdks()
}

fn ratio(x: f64, base: f64) -> String {
    if base.is_finite() && base > 0.0 {
        format!("{:.2}x", x / base)
    } else {
        "-".into()
    }
}

/// An awaited single enqueue through each SDK on each store.
pub(crate) fn sdk_overhead(plan: &SdkPlan) -> Result<(), String> {
    let d = prepare(plan)?;
    let jobs = plan.jobs.unwrap_or(5_000);
    let cmd = Cmd { name: "enqueue-single", jobs, concurrency: 1, rate: 100.0 };
    let mut rows = Vec::new();
    for &store in &plan.stores {
        let mut rates = Vec::new();
        for sdk in SDKS {
            let (rate, lines) = median_of(&d, sdk, store, &cmd, plan.runs, "rate")?;
            let call = median(lines.iter().map(|v| field(v, "call_p50_ms")).collect());
            rates.push((sdk, rate, call));
        }
        rows.push((store, rates));
    }
    println!("\nAwaited single enqueue, {jobs} no-op jobs per run, median of {} runs", plan.runs);
    println!("{:<9} {:<14} {:>10} {:>12} {:>9}", "store", "sdk", "jobs/s", "call p50 ms", "vs Rust");
    for (store, rates) in rows {
        let base = rates[0].1;
        for (sdk, rate, call) in rates {
            println!(
                "{:<9} {:<14} {:>10.0} {:>12.3} {:>9}",
                store_name(store),
                sdk.name(),
                rate,
                call,
                ratio(rate, base)
            );
        }
    }
    Ok(())
}

/// Enqueue-to-handler-start at 100 jobs/s through each SDK on each store.
pub(crate) fn latency(plan: &SdkPlan) -> Result<(), String> {
    let d = prepare(plan)?;
    let jobs = plan.jobs.unwrap_or(500);
    let cmd = Cmd { name: "latency", jobs, concurrency: 1, rate: 100.0 };
    let mut rows = Vec::new();
    for &store in &plan.stores {
        for sdk in SDKS {
            let (p50, lines) = median_of(&d, sdk, store, &cmd, plan.runs, "p50_ms")?;
            let p99 = median(lines.iter().map(|v| field(v, "p99_ms")).collect());
            let trip = median(lines.iter().map(|v| field(v, "enqueue_p50_ms")).collect());
            rows.push((store, sdk, p50, p99, trip));
        }
    }
    println!(
        "\nEnqueue to handler start, {jobs} jobs at 100/s into an idle worker, median of {} runs",
        plan.runs
    );
    println!("(baseline: the median awaited enqueue from Rust on the same store in this run)");
    println!(
        "{:<9} {:<14} {:>8} {:>8} {:>12} {:>13}",
        "store", "sdk", "p50 ms", "p99 ms", "enqueue ms", "baseline ms"
    );
    for &(store, sdk, p50, p99, trip) in &rows {
        let base = rows.iter().find(|r| r.0 == store && r.1 == System::Rust).map_or(f64::NAN, |r| r.4);
        println!(
            "{:<9} {:<14} {:>8.3} {:>8.3} {:>12.3} {:>13.3}",
            store_name(store),
            sdk.name(),
            p50,
            p99,
            trip,
            base
        );
    }
    Ok(())
}

/// Repeated short drains on release builds; an error naming every run whose longest gap was
/// over the limit.
pub(crate) fn drain_gaps(plan: &SdkPlan) -> Result<(), String> {
    let d = prepare(plan)?;
    gaps(&d, plan, 0)
}

/// CI's short form: one drain of 1,000 jobs per store, SDK and concurrency on the builds the
/// suites before it made. A run over the limit is run once more and fails only if the rerun
/// is over it too: a missed wake-up costs a poll interval every time, while a CI machine busy
/// elsewhere for a moment does not repeat on cue.
pub(crate) fn drain_gaps_ci() -> Result<(), String> {
    let d = crate::bench::built_sdks()?;
    gaps(&d, &SdkPlan { stores: crate::bench::STORES.to_vec(), jobs: Some(1_000), runs: 1 }, 1)
}

/// `plan.runs` drains per store, SDK and concurrency; a run over the limit is repeated up to
/// `reruns` times and counts as over only when every repeat is too.
fn gaps(d: &Drivers, plan: &SdkPlan, reruns: u32) -> Result<(), String> {
    let jobs = plan.jobs.unwrap_or(2_000);
    let mut over = Vec::new();
    println!("\nDrain gaps: {} drains of {jobs} jobs per store, SDK and concurrency", plan.runs);
    println!("{:<9} {:<14} {:>4} {:>12} {:>16}", "store", "sdk", "conc", "jobs/s p50", "longest gap ms");
    for &store in &plan.stores {
        for sdk in SDKS {
            for concurrency in [1, 8] {
                let cmd = Cmd { name: "drain", jobs, concurrency, rate: 100.0 };
                let (mut rates, mut worst) = (Vec::new(), 0.0_f64);
                for run in 0..plan.runs {
                    let mut v = measure(d, sdk, store, &cmd)?;
                    let mut gap = field(&v, "max_gap_ms");
                    for _ in 0..reruns {
                        if gap <= GAP_LIMIT_MS {
                            break;
                        }
                        eprintln!("  longest gap {gap:.1} ms: running it once more");
                        v = measure(d, sdk, store, &cmd)?;
                        gap = field(&v, "max_gap_ms");
                    }
                    if gap.is_nan() || gap > GAP_LIMIT_MS {
                        over.push(format!(
                            "{} on {} at concurrency {concurrency}, run {run}: {gap:.1} ms",
                            sdk.name(),
                            store_name(store)
                        ));
                    }
                    worst = worst.max(gap);
                    rates.push(field(&v, "rate"));
                }
                println!(
                    "{:<9} {:<14} {:>4} {:>12.0} {:>16.1}",
                    store_name(store),
                    sdk.name(),
                    concurrency,
                    median(rates),
                    worst
                );
            }
        }
    }
    if over.is_empty() {
        Ok(())
    } else {
        Err(format!("drain gaps over {GAP_LIMIT_MS} ms while jobs were due:\n  {}", over.join("\n  ")))
    }
}
