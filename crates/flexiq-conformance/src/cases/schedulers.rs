//! Job schedulers: upsert, read, list, remove and count, and firing the due ones exactly once
//! per slot, also when two leaders fire at the same moment.

use flexiq_core::schedule::{CatchUp, JobScheduler, JobTemplate, RepeatRule};
use flexiq_core::store::{FireSchedulersRequest, ListSchedulersRequest, UpsertSchedulerRequest};
use flexiq_core::{EnqueueOptions, ErrorKind, JobStatus, Store};

use crate::fixtures::{assert_kind, open, tamper};
use crate::Harness;

/// 2026-03-27T12:00:00Z, a Friday before Berlin's spring-forward.
const T0: i64 = 1_774_612_800_000;
const HOUR: i64 = 3_600_000;

fn every(every_ms: u64) -> RepeatRule {
    RepeatRule::every(every_ms)
}

fn template(task: &str) -> JobTemplate {
    let options = EnqueueOptions { queue: Some("cron".into()), priority: Some(3), ..Default::default() };
    JobTemplate { task: task.into(), payload: b"{\"n\":1}".to_vec(), options }
}

async fn upsert(s: &dyn Store, id: &str, rule: RepeatRule, now: i64) -> JobScheduler {
    let req = UpsertSchedulerRequest { id: id.into(), rule, template: template("tick"), now };
    s.upsert_job_scheduler(req).await.unwrap_or_else(|e| panic!("upsert {id}: {e}"))
}

async fn fire(s: &dyn Store, now: i64) -> Vec<(String, i64)> {
    let fired = s.fire_due_schedulers(FireSchedulersRequest { limit: 100, now }).await.unwrap();
    fired.into_iter().map(|f| (f.scheduler_id, f.slot_ms)).collect()
}

/// An upserted scheduler reads back whole; an unknown id is `None`; another handle on the
/// same storage sees it.
pub async fn scheduler_upsert_reads_back(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut rule = every(1_000);
    rule.limit = Some(5);
    let made = upsert(&*s, "beat", rule.clone(), T0).await;
    assert_eq!((made.next_run_ms, made.iterations, made.last_run_ms), (Some(T0 + 1_000), 0, None));
    assert_eq!((made.created_at, made.updated_at), (T0, T0));
    assert_eq!(s.get_job_scheduler("beat").await.unwrap().as_ref(), Some(&made));
    assert_eq!(s.get_job_scheduler("nope").await.unwrap(), None);
    let again = open(h, "default").await;
    let read = again.get_job_scheduler("beat").await.unwrap().unwrap();
    assert_eq!((read.rule, read.template), (rule, template("tick")));
}

/// Each due slot enqueues one job of the template, due at the slot and keyed by it; a limit
/// stops the scheduler after that many.
pub async fn scheduler_fires_each_slot_once_up_to_its_limit(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut rule = every(1_000);
    rule.limit = Some(3);
    upsert(&*s, "beat", rule, T0).await;
    assert!(fire(&*s, T0 + 999).await.is_empty(), "nothing is due yet");
    let mut slots = Vec::new();
    for i in 1..=6 {
        let fired =
            s.fire_due_schedulers(FireSchedulersRequest { limit: 100, now: T0 + i * 1_000 }).await.unwrap();
        for f in fired {
            let job = s.get(&f.job_id).await.unwrap().unwrap_or_else(|| panic!("job {} missing", f.job_id));
            assert_eq!((job.task.as_str(), job.queue.as_str(), job.priority), ("tick", "cron", 3));
            assert_eq!((job.run_at, job.status), (f.slot_ms, JobStatus::Pending));
            assert_eq!(job.payload, b"{\"n\":1}".to_vec());
            assert_eq!(job.unique_key, Some(format!("scheduler:beat:{}", f.slot_ms)));
            slots.push(f.slot_ms);
        }
        assert!(fire(&*s, T0 + i * 1_000).await.is_empty(), "a second round at the same time fires nothing");
    }
    assert_eq!(slots, vec![T0 + 1_000, T0 + 2_000, T0 + 3_000]);
    let after = s.get_job_scheduler("beat").await.unwrap().unwrap();
    assert_eq!((after.iterations, after.next_run_ms, after.last_run_ms), (3, None, Some(T0 + 3_000)));
}

/// Two handles (two leaders) firing the same due slots at the same moment enqueue each slot
/// once between them.
pub async fn scheduler_two_leaders_fire_a_slot_once(h: &dyn Harness) {
    let a = open(h, "default").await;
    let b = open(h, "default").await;
    for i in 0..10 {
        let mut rule = every(1_000);
        rule.catch_up = CatchUp::All { max: 10 };
        upsert(&*a, &format!("s{i}"), rule, T0).await;
    }
    let now = T0 + 3_000;
    let (x, y) = tokio::join!(fire(&*a, now), fire(&*b, now));
    let mut all: Vec<(String, i64)> = x.into_iter().chain(y).collect();
    all.sort();
    let want: Vec<(String, i64)> =
        (0..10).flat_map(|i| (1..=3).map(move |k| (format!("s{i}"), T0 + k * 1_000))).collect();
    assert_eq!(all, want, "every slot fired exactly once");
    let pending = a.stats(Some("cron")).await.unwrap().pending;
    assert_eq!(pending, 30, "one job per slot");
}

/// Replacing a scheduler keeps its count and never fires a slot it already fired; the new
/// rule applies from the next slot.
pub async fn scheduler_upsert_replaces_without_refiring(h: &dyn Harness) {
    let s = open(h, "default").await;
    upsert(&*s, "beat", every(1_000), T0).await;
    assert_eq!(fire(&*s, T0 + 1_000).await, vec![("beat".to_string(), T0 + 1_000)]);
    let replaced = upsert(&*s, "beat", every(5_000), T0 + 1_000).await;
    assert_eq!((replaced.iterations, replaced.created_at, replaced.updated_at), (1, T0, T0 + 1_000));
    assert_eq!(replaced.next_run_ms, Some(T0 + 5_000), "every 5 s from the creation");
    assert!(fire(&*s, T0 + 1_000).await.is_empty());
    assert_eq!(fire(&*s, T0 + 5_000).await, vec![("beat".to_string(), T0 + 5_000)]);
    assert_eq!(s.count_job_schedulers().await.unwrap(), 1);
}

/// A cron rule in Europe/Berlin fires at local wall time across the spring-forward: 02:30 on
/// the day the clock skips 02:00-03:00 fires once, at 03:00 CEST.
pub async fn scheduler_cron_follows_berlin_daylight_saving(h: &dyn Harness) {
    let s = open(h, "default").await;
    let rule = RepeatRule::cron("30 2 * * *", Some("Europe/Berlin"));
    upsert(&*s, "nightly", rule, T0).await;
    let mut slots = Vec::new();
    for hour in 1..=72 {
        slots.extend(fire(&*s, T0 + hour * HOUR).await.into_iter().map(|(_, slot)| slot));
    }
    // 2026-03-28 01:30Z (02:30 CET), 2026-03-29 01:00Z (03:00 CEST), 2026-03-30 00:30Z.
    assert_eq!(slots, vec![1_774_661_400_000, 1_774_746_000_000, 1_774_830_600_000]);
}

/// Listing pages by id with an opaque cursor; a bad cursor or limit is refused.
pub async fn scheduler_list_pages_by_id(h: &dyn Harness) {
    let s = open(h, "default").await;
    for i in (0..25).rev() {
        upsert(&*s, &format!("s{i:02}"), every(60_000), T0).await;
    }
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page =
            s.list_job_schedulers(ListSchedulersRequest { limit: 10, after: after.clone() }).await.unwrap();
        seen.extend(page.items.iter().map(|j| j.id.clone()));
        match page.next_cursor {
            Some(c) => after = Some(c),
            None => break,
        }
    }
    let want: Vec<String> = (0..25).map(|i| format!("s{i:02}")).collect();
    assert_eq!(seen, want);
    let first = s.list_job_schedulers(ListSchedulersRequest { limit: 10, after: None }).await.unwrap();
    let cursor = first.next_cursor.unwrap();
    for bad in ["garbage".to_string(), tamper(&cursor)] {
        let r = s.list_job_schedulers(ListSchedulersRequest { limit: 10, after: Some(bad) }).await;
        assert_kind(r, ErrorKind::InvalidArgument);
    }
    assert_kind(
        s.list_job_schedulers(ListSchedulersRequest { limit: 0, after: None }).await,
        ErrorKind::InvalidArgument,
    );
    assert_eq!(s.count_job_schedulers().await.unwrap(), 25);
}

/// Remove, count and namespaces: a removed scheduler fires no more and its jobs stay; another
/// namespace sees none of them.
pub async fn scheduler_remove_count_and_namespaces(h: &dyn Harness) {
    let s = open(h, "default").await;
    let other = open(h, "other").await;
    upsert(&*s, "a", every(1_000), T0).await;
    upsert(&*s, "b", every(1_000), T0).await;
    upsert(&*other, "a", every(1_000), T0).await;
    assert_eq!(fire(&*s, T0 + 1_000).await.len(), 2);
    assert!(s.remove_job_scheduler("a").await.unwrap());
    assert!(!s.remove_job_scheduler("a").await.unwrap());
    assert_eq!(s.count_job_schedulers().await.unwrap(), 1);
    assert_eq!(fire(&*s, T0 + 2_000).await, vec![("b".to_string(), T0 + 2_000)]);
    assert_eq!(s.stats(Some("cron")).await.unwrap().pending, 3, "jobs fired by a removed scheduler stay");
    assert_eq!(other.count_job_schedulers().await.unwrap(), 1);
    assert!(other.get_job_scheduler("b").await.unwrap().is_none());
    assert_eq!(other.get_job_scheduler("a").await.unwrap().unwrap().iterations, 0);
    assert_eq!(fire(&*other, T0 + 1_000).await, vec![("a".to_string(), T0 + 1_000)]);
}

/// A malformed rule or template is refused and nothing is stored.
pub async fn scheduler_bad_input_writes_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let bad_cron = RepeatRule::cron("61 * * * *", None);
    let bad_zone = RepeatRule::cron("* * * * *", Some("Nowhere/Town"));
    for rule in [bad_cron, bad_zone, every(0)] {
        let r = s
            .upsert_job_scheduler(UpsertSchedulerRequest {
                id: "x".into(),
                rule,
                template: template("t"),
                now: T0,
            })
            .await;
        assert_kind(r, ErrorKind::InvalidArgument);
    }
    let mut keyed = template("t");
    keyed.options.unique_key = Some("k".into());
    let r = s
        .upsert_job_scheduler(UpsertSchedulerRequest {
            id: "x".into(),
            rule: every(1),
            template: keyed,
            now: T0,
        })
        .await;
    assert_kind(r, ErrorKind::InvalidArgument);
    let r = s
        .upsert_job_scheduler(UpsertSchedulerRequest {
            id: String::new(),
            rule: every(1),
            template: template("t"),
            now: T0,
        })
        .await;
    assert_kind(r, ErrorKind::InvalidArgument);
    assert_kind(
        s.fire_due_schedulers(FireSchedulersRequest { limit: 0, now: T0 }).await,
        ErrorKind::InvalidArgument,
    );
    assert_eq!(s.count_job_schedulers().await.unwrap(), 0);
}

/// A slot of a revoked task enqueues nothing and the scheduler moves past it without counting
/// it, so it neither retries that slot forever nor blocks the others, and a limit still gets
/// its jobs once the task is accepted again.
pub async fn scheduler_revoked_task_skips_the_slot(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.revoke_task("tick").await.unwrap();
    let mut once = every(1_000);
    once.limit = Some(1);
    upsert(&*s, "beat", every(1_000), T0).await;
    upsert(&*s, "once", once, T0).await;
    assert!(fire(&*s, T0 + 1_000).await.is_empty());
    for id in ["beat", "once"] {
        let after = s.get_job_scheduler(id).await.unwrap().unwrap();
        assert_eq!(
            (after.next_run_ms, after.iterations, after.last_run_ms),
            (Some(T0 + 2_000), 0, None),
            "{id}"
        );
    }
    assert_eq!(s.stats(Some("cron")).await.unwrap().pending, 0);
    s.unrevoke_task("tick").await.unwrap();
    let mut fired = fire(&*s, T0 + 2_000).await;
    fired.sort();
    assert_eq!(fired, vec![("beat".to_string(), T0 + 2_000), ("once".to_string(), T0 + 2_000)]);
    let once = s.get_job_scheduler("once").await.unwrap().unwrap();
    assert_eq!((once.iterations, once.next_run_ms), (1, None), "the limit counts fired jobs only");
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_schedulers {
    ($callback:path, $make:path) => {
        $callback!($make;
            schedulers::scheduler_upsert_reads_back,
            schedulers::scheduler_fires_each_slot_once_up_to_its_limit,
            schedulers::scheduler_two_leaders_fire_a_slot_once,
            schedulers::scheduler_upsert_replaces_without_refiring,
            schedulers::scheduler_cron_follows_berlin_daylight_saving,
            schedulers::scheduler_list_pages_by_id,
            schedulers::scheduler_remove_count_and_namespaces,
            schedulers::scheduler_bad_input_writes_nothing,
            schedulers::scheduler_revoked_task_skips_the_slot,
        );
    };
}
