//! `soak`: a steady mixed load on one store for a while, watching the process's memory, open
//! file descriptors and store connections, then holding the queue's end state to account.
//!
//! A leak shows as a resource that keeps climbing under a load that does not: this samples
//! every `--sample-secs` (default 10) and calls the run flat when each resource's peak in the
//! last window is within 10% of its peak in the first (a window is five minutes, or a fifth of
//! a shorter run; descriptor and connection counts may also move by 2). After the load stops
//! and the workers drain, every job the store acknowledged must be accounted for: completed,
//! dead, failed (or removed by the soak's maintenance once terminal, which counts what it
//! removes), cancelled, or still pending, and none running.
//!
//! `soak --store sqlite|pg|redis --secs N [--rate JOBS_PER_SEC] [--seed N]` prints one line per
//! sample and a final JSON line, and exits 1 when the run is not flat or a job went missing.
//! `cargo xtask soak` runs it per store and sums up.

mod load;
mod probe;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flexiq_runtime::{ConnectOptions, Queue, Stats};
use flexiq_testkit::Backing;

use crate::load::{Load, Tally};
use crate::probe::Reading;

/// The first (and last) window of a run: five minutes, or a fifth of a shorter run.
const WINDOW_SECS: u64 = 300;
/// Growth allowed between the windows.
const TOLERANCE: f64 = 0.10;
/// Slack for the small counts (descriptors, connections) on top of the tolerance.
const COUNT_SLACK: u64 = 2;

struct Args {
    store: String,
    secs: u64,
    sample_secs: u64,
    rate: u32,
    seed: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { store: String::new(), secs: 60, sample_secs: 10, rate: 60, seed: 1 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--store" => a.store = value()?,
            "--secs" => a.secs = value()?.parse().map_err(|e| format!("--secs: {e}"))?,
            "--sample-secs" => a.sample_secs = value()?.parse().map_err(|e| format!("--sample-secs: {e}"))?,
            "--rate" => a.rate = value()?.parse().map_err(|e| format!("--rate: {e}"))?,
            "--seed" => a.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if a.secs < 10 || a.sample_secs == 0 || a.rate == 0 {
        return Err("--secs must be at least 10, --sample-secs and --rate at least 1".into());
    }
    Ok(a)
}

async fn open(store: &str) -> Result<(Box<dyn Backing>, Option<u16>), String> {
    match store {
        #[cfg(feature = "sqlite")]
        "sqlite" => Ok((Box::new(flexiq_testkit::SqliteBacking::open().map_err(|e| e.to_string())?), None)),
        #[cfg(feature = "postgres")]
        "pg" | "postgres" => {
            let port = server_port(&flexiq_testkit::backing::pg_url(), 5432);
            Ok((Box::new(flexiq_testkit::PgBacking::open().await.map_err(|e| e.to_string())?), Some(port)))
        }
        #[cfg(feature = "redis")]
        "redis" => {
            let port = server_port(&flexiq_conformance::redis_kit::redis_url(), 6379);
            Ok((Box::new(flexiq_testkit::RedisBacking::open().await.map_err(|e| e.to_string())?), Some(port)))
        }
        other => Err(format!("store {other:?} is unknown or not compiled in (build with --all-features)")),
    }
}

/// The port of a `scheme://[user@]host[:port][/...]` URL.
#[allow(dead_code)]
fn server_port(url: &str, default: u16) -> u16 {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    host_port.rsplit_once(':').and_then(|(_, p)| p.parse().ok()).unwrap_or(default)
}

struct Sample {
    t: u64,
    reading: Reading,
}

/// Peak of each resource over the samples with `t` in `range`.
fn peak(samples: &[Sample], range: std::ops::RangeInclusive<u64>) -> Reading {
    samples.iter().filter(|s| range.contains(&s.t)).fold(Reading::default(), |m, s| Reading {
        rss_kb: m.rss_kb.max(s.reading.rss_kb),
        fds: m.fds.max(s.reading.fds),
        conns: m.conns.max(s.reading.conns),
    })
}

fn within(first: u64, last: u64, slack: u64) -> bool {
    let allowed = ((first as f64) * (1.0 + TOLERANCE)).max((first + slack) as f64);
    last as f64 <= allowed
}

fn accounted(s: &Stats, removed: u64) -> u64 {
    s.completed + removed + s.dead + s.failed + s.cancelled + s.pending + s.waiting + s.suspended + s.running
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("soak: {e}");
            return ExitCode::from(2);
        }
    };
    let (backing, port) = match open(&args.store).await {
        Ok(b) => b,
        Err(e) => {
            eprintln!("soak: cannot open store {}: {e}", args.store);
            return ExitCode::from(2);
        }
    };
    let outcome = soak(&args, backing.as_ref(), port).await;
    backing.cleanup().await;
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("soak {}: {e}", args.store);
            ExitCode::FAILURE
        }
    }
}

async fn soak(args: &Args, backing: &dyn Backing, port: Option<u16>) -> Result<bool, String> {
    let store = backing.namespace("soak").map_err(|e| format!("namespace soak: {e}"))?;
    let queue = Queue::from_store(store, &ConnectOptions::namespace("soak"));
    let name = backing.name();
    let load = Load::start(queue.clone(), args.seed, args.rate).await?;
    let tally: Arc<Tally> = load.tally().clone();
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut next = Duration::from_secs(args.sample_secs);
    while next <= Duration::from_secs(args.secs) {
        tokio::time::sleep(next.saturating_sub(started.elapsed())).await;
        let reading = probe::read(port);
        let t = next.as_secs();
        let s = queue.stats().await.unwrap_or_default();
        println!(
            "[{name}] t={t:>5}s rss={:>7.1} MB fds={:>4} conns={:>3} enqueued={:>8} runs={:>8} completed={:>7} purged={:>8} dead={:>6} pending={:>6} running={:>4}",
            reading.rss_kb as f64 / 1024.0,
            reading.fds,
            reading.conns,
            Tally::get(&tally.enqueued),
            Tally::get(&tally.runs),
            s.completed,
            Tally::get(&tally.purged),
            s.dead,
            s.pending + s.waiting,
            s.running,
        );
        samples.push(Sample { t, reading });
        next += Duration::from_secs(args.sample_secs);
    }
    let stats = load.finish(Duration::from_secs(60)).await?;

    let window = (args.secs / 5).clamp(args.sample_secs, WINDOW_SECS);
    let first = peak(&samples, 0..=window);
    let last = peak(&samples, args.secs.saturating_sub(window) + 1..=args.secs);
    let rss_flat = within(first.rss_kb, last.rss_kb, 0);
    let fds_flat = within(first.fds, last.fds, COUNT_SLACK);
    let conns_flat = within(first.conns, last.conns, COUNT_SLACK);
    let flat = rss_flat && fds_flat && conns_flat;
    let enqueued = Tally::get(&tally.enqueued);
    let purged = Tally::get(&tally.purged);
    let cleaned = Tally::get(&tally.cleaned);
    let lost = enqueued as i64 - accounted(&stats, purged + cleaned) as i64;
    let errors = Tally::get(&tally.errors);
    let ok = flat && lost == 0 && stats.running == 0 && errors == 0;
    println!(
        "{{\"store\":\"{name}\",\"secs\":{},\"samples\":{},\"window_secs\":{window},\"rss_kb_first\":{},\"rss_kb_last\":{},\"fds_first\":{},\"fds_last\":{},\"conns_first\":{},\"conns_last\":{},\"flat\":{flat},\"enqueued\":{enqueued},\"runs\":{},\"completed\":{},\"purged\":{purged},\"cleaned\":{cleaned},\"dead\":{},\"failed\":{},\"cancelled\":{},\"pending_at_stop\":{},\"running_after_drain\":{},\"lost\":{lost},\"errors\":{errors},\"events_trimmed\":{},\"ok\":{ok}}}",
        args.secs,
        samples.len(),
        first.rss_kb,
        last.rss_kb,
        first.fds,
        last.fds,
        first.conns,
        last.conns,
        Tally::get(&tally.runs),
        stats.completed,
        stats.dead,
        stats.failed,
        stats.cancelled,
        stats.pending + stats.waiting + stats.suspended,
        stats.running,
        Tally::get(&tally.trimmed),
    );
    if !flat {
        eprintln!(
            "soak {name}: not flat: rss {} -> {} kB, fds {} -> {}, conns {} -> {}",
            first.rss_kb, last.rss_kb, first.fds, last.fds, first.conns, last.conns
        );
    }
    if lost != 0 || stats.running != 0 {
        eprintln!(
            "soak {name}: end state does not add up: enqueued {enqueued}, accounted {} (purged {purged}, {stats:?}), lost {lost}",
            accounted(&stats, purged + cleaned)
        );
    }
    queue.close().await.map_err(|e| format!("close: {e}"))?;
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_come_from_the_url_or_the_default() {
        assert_eq!(server_port("postgres://postgres@127.0.0.1:5433/test", 5432), 5433);
        assert_eq!(server_port("postgres://127.0.0.1/test", 5432), 5432);
        assert_eq!(server_port("redis://127.0.0.1:6380", 6379), 6380);
        assert_eq!(server_port("redis://u:p@h", 6379), 6379);
    }

    #[test]
    fn growth_past_the_tolerance_is_not_flat() {
        assert!(within(100_000, 109_000, 0));
        assert!(!within(100_000, 111_000, 0));
        assert!(within(12, 14, COUNT_SLACK));
        assert!(!within(12, 15, COUNT_SLACK));
    }
}
