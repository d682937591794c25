//! Job schedulers as JavaScript passes and reads them: the rule (`SchedulerRepeat`), the job
//! template (`SchedulerTemplate`) and the stored scheduler (`JobSchedulerRecord`), with their
//! conversions to and from `flexiq_core::schedule`.
//!
//! The rule and the template travel both ways in the same shapes, so a scheduler read back
//! can be passed to `upsertJobScheduler` again: times are Unix ms, the period `everyMs` is
//! milliseconds, and the template's options are the enqueue options in the units `enqueue`
//! takes them (`timeout` and `backoff` in **seconds**). Payloads and metadata cross as JSON
//! text; the JS layer (`lib/queue/schedulers.cjs`) encodes and decodes them, turns `Date`s
//! into Unix ms, refuses unknown keys and the enqueue options a template may not set, and
//! gives absent values as `null`. Which slots fire, and when, is core's.

use flexiq_core::schedule::MAX_CATCH_UP;
use flexiq_core::{CatchUp, EnqueueOptions, JobScheduler, JobTemplate, Repeat, RepeatRule};
use napi_derive::napi;

use crate::args;
use crate::error::{invalid, Result};
use crate::options::{BackoffOptions, JobOptions};

/// Slots fired per round under `catchUp: 'all'` when `catchUpMax` is not given.
pub(crate) const DEFAULT_CATCH_UP_MAX: u32 = 100;

/// When a scheduler fires: exactly one of `cron` or `everyMs`, and the bounds and catch-up of
/// its slots. Times in Unix ms, the period in ms.
#[napi(object)]
pub struct SchedulerRepeat {
    /// A cron pattern (five fields, or six with seconds first), e.g. `"0 9 * * MON-FRI"`.
    pub cron: Option<String>,
    /// The IANA zone the cron pattern is read in, e.g. `"Europe/Berlin"` (default UTC); cron
    /// only.
    pub tz: Option<String>,
    /// Fire every this many **milliseconds** (a whole number, 1 or more) from `startAtMs`, or
    /// from the scheduler's creation.
    pub every_ms: Option<f64>,
    /// Fire at most this many jobs in all (a whole number, 1 or more); absent: no limit.
    pub limit: Option<f64>,
    /// No slot before this time (Unix ms).
    pub start_at_ms: Option<f64>,
    /// No slot after this time (Unix ms).
    pub end_at_ms: Option<f64>,
    /// Fire once at once (at the upsert, or at `startAtMs`), then follow the rule (default
    /// `false`).
    pub immediately: Option<bool>,
    /// Slots missed while no leader ran: `'latest'` (default) fires the newest only, `'none'`
    /// skips them, `'all'` fires each, oldest first, at most `catchUpMax` a round.
    #[napi(ts_type = "'latest' | 'none' | 'all'")]
    pub catch_up: Option<String>,
    /// With `catchUp: 'all'`, most slots fired per round (1 to 1,000, default 100).
    pub catch_up_max: Option<f64>,
}

impl SchedulerRepeat {
    /// The engine's rule, numbers checked; the pattern, zone and window are checked by core.
    pub(crate) fn resolve(self) -> Result<RepeatRule> {
        let repeat = match (self.cron, self.every_ms) {
            (Some(_), Some(_)) => return Err(invalid("repeat takes cron or everyMs, not both")),
            (None, None) => {
                return Err(invalid(
                    "repeat needs cron (a cron pattern) or everyMs (a period in milliseconds)",
                ))
            }
            (Some(pattern), None) => Repeat::Cron { pattern, tz: self.tz },
            (None, Some(ms)) => {
                if let Some(tz) = self.tz {
                    return Err(invalid(format!("repeat.tz {tz:?} applies to cron only, not everyMs")));
                }
                Repeat::Every { every_ms: args::positive("repeat.everyMs", ms)? }
            }
        };
        let catch_up = match (self.catch_up.as_deref(), self.catch_up_max) {
            (Some("all"), max) => CatchUp::All {
                max: max.map_or(Ok(DEFAULT_CATCH_UP_MAX), |m| {
                    args::int("repeat.catchUpMax", m, 1, i64::from(MAX_CATCH_UP)).map(|m| m as u32)
                })?,
            },
            (_, Some(_)) => return Err(invalid("repeat.catchUpMax applies to catchUp 'all' only")),
            (None | Some("latest"), None) => CatchUp::Latest,
            (Some("none"), None) => CatchUp::None,
            (Some(other), None) => {
                return Err(invalid(format!("repeat.catchUp {other:?} must be 'latest', 'none' or 'all'")))
            }
        };
        Ok(RepeatRule {
            repeat,
            limit: self.limit.map(|l| args::positive("repeat.limit", l)).transpose()?,
            start_at_ms: self.start_at_ms.map(|t| args::unix_ms("repeat.startAtMs", t)).transpose()?,
            end_at_ms: self.end_at_ms.map(|t| args::unix_ms("repeat.endAtMs", t)).transpose()?,
            immediately: self.immediately.unwrap_or(false),
            catch_up,
        })
    }
}

impl From<RepeatRule> for SchedulerRepeat {
    fn from(r: RepeatRule) -> Self {
        let (cron, tz, every_ms) = match r.repeat {
            Repeat::Cron { pattern, tz } => (Some(pattern), tz, None),
            Repeat::Every { every_ms } => (None, None, Some(every_ms as f64)),
        };
        let (catch_up, catch_up_max) = match r.catch_up {
            CatchUp::Latest => ("latest", None),
            CatchUp::None => ("none", None),
            CatchUp::All { max } => ("all", Some(f64::from(max))),
        };
        SchedulerRepeat {
            cron,
            tz,
            every_ms,
            limit: r.limit.map(|l| l as f64),
            start_at_ms: r.start_at_ms.map(|t| t as f64),
            end_at_ms: r.end_at_ms.map(|t| t as f64),
            immediately: Some(r.immediately),
            catch_up: Some(catch_up.to_string()),
            catch_up_max,
        }
    }
}

/// The enqueue options a template may set: those of `enqueue` but the ones each slot decides
/// (`delay`, `runAt`, `uniqueKey`, `dedup`, `dependsOn`, `lifo`). Durations in **seconds**.
#[napi(object)]
pub struct SchedulerTemplateOptions {
    /// Queue name (default `"default"`).
    pub queue: Option<String>,
    /// Higher runs first (a whole number, default 0).
    pub priority: Option<f64>,
    /// Retries after the first attempt (default 3).
    pub max_retries: Option<f64>,
    /// Retry backoff (seconds).
    pub backoff: Option<BackoffOptions>,
    /// Hard timeout of one attempt, in **seconds**.
    pub timeout: Option<f64>,
    /// Metadata object as JSON text (the JS layer encodes and decodes it).
    #[napi(ts_type = "string")]
    pub metadata: Option<String>,
    /// Fairness group.
    pub group_key: Option<String>,
}

impl SchedulerTemplateOptions {
    /// The engine's enqueue options, converted and checked as `enqueue`'s are.
    fn resolve(self) -> Result<EnqueueOptions> {
        JobOptions {
            queue: self.queue,
            priority: self.priority,
            delay: None,
            run_at: None,
            max_retries: self.max_retries,
            backoff: self.backoff,
            timeout: self.timeout,
            unique_key: None,
            metadata: self.metadata,
            depends_on: None,
            group_key: self.group_key,
            lifo: None,
            dedup: None,
        }
        .resolve()
    }
}

impl From<EnqueueOptions> for SchedulerTemplateOptions {
    fn from(o: EnqueueOptions) -> Self {
        let secs = args::ms_to_secs;
        SchedulerTemplateOptions {
            queue: o.queue,
            priority: o.priority.map(f64::from),
            max_retries: o.max_retries.map(f64::from),
            backoff: o
                .backoff
                .map(|b| BackoffOptions { base: Some(secs(b.base_ms)), max: Some(secs(b.max_ms)) }),
            timeout: o.timeout_ms.map(secs),
            metadata: o.metadata,
            group_key: o.group_key,
        }
    }
}

/// The job each slot enqueues.
#[napi(object)]
pub struct SchedulerTemplate {
    /// Task name.
    pub task: String,
    /// The payload as JSON text.
    pub payload: String,
    /// Its enqueue options.
    pub options: Option<SchedulerTemplateOptions>,
}

impl SchedulerTemplate {
    /// The engine's template; what a template may set is checked by core.
    pub(crate) fn resolve(self) -> Result<JobTemplate> {
        Ok(JobTemplate {
            task: self.task,
            payload: self.payload.into_bytes(),
            options: self.options.map(SchedulerTemplateOptions::resolve).transpose()?.unwrap_or_default(),
        })
    }
}

impl From<JobTemplate> for SchedulerTemplate {
    fn from(t: JobTemplate) -> Self {
        SchedulerTemplate {
            task: t.task,
            payload: String::from_utf8_lossy(&t.payload).into_owned(),
            options: Some(t.options.into()),
        }
    }
}

/// A stored job scheduler. Times in Unix ms.
#[napi(object)]
pub struct JobSchedulerRecord {
    /// Its id in the namespace.
    pub id: String,
    /// When it fires.
    pub repeat: SchedulerRepeat,
    /// The job it enqueues.
    pub template: SchedulerTemplate,
    /// The next slot (Unix ms); absent once no slot is left (limit or `endAtMs` reached).
    pub next_run_ms: Option<f64>,
    /// The newest slot fired (Unix ms); absent before the first.
    pub last_run_ms: Option<f64>,
    /// Jobs fired so far.
    pub iterations: f64,
    /// When it was created (Unix ms).
    pub created_at: f64,
    /// When it was last upserted (Unix ms).
    pub updated_at: f64,
}

impl From<JobScheduler> for JobSchedulerRecord {
    fn from(s: JobScheduler) -> Self {
        JobSchedulerRecord {
            id: s.id,
            repeat: s.rule.into(),
            template: s.template.into(),
            next_run_ms: s.next_run_ms.map(|t| t as f64),
            last_run_ms: s.last_run_ms.map(|t| t as f64),
            iterations: s.iterations as f64,
            created_at: s.created_at as f64,
            updated_at: s.updated_at as f64,
        }
    }
}

/// A keyset page of schedulers, by id.
#[napi(object)]
pub struct JobSchedulerPage {
    /// The schedulers.
    pub items: Vec<JobSchedulerRecord>,
    /// Pass back as `after` for the next page; absent when this was the last.
    pub next_cursor: Option<String>,
}

impl From<flexiq_core::Page<JobScheduler>> for JobSchedulerPage {
    fn from(p: flexiq_core::Page<JobScheduler>) -> Self {
        JobSchedulerPage { items: p.items.into_iter().map(Into::into).collect(), next_cursor: p.next_cursor }
    }
}

/// Which page of schedulers `listJobSchedulers` reads.
#[napi(object)]
pub struct ListJobSchedulersOptions {
    /// Page size, 1 to 10,000 (default 100).
    pub limit: Option<f64>,
    /// The previous page's `nextCursor`; absent for the first page.
    pub after: Option<String>,
}
