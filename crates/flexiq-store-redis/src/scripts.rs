//! The Lua scripts the store runs, each loaded as a Redis Functions library (`FUNCTION LOAD`)
//! named after the SHA-1 of its code and called with `FCALL`. A script sent with `EVAL` or
//! `EVALSHA` runs its whole text on every call, so the shared tables and helper functions
//! below were built again for each one, before any work (on a two-core machine 6 to 9 µs for
//! the header and the events helpers, 15 µs with the prelude, 18 to 20 µs with the claim step);
//! a library's top level runs once, when it is loaded.
//!
//! Every script starts with a header generated here from `flexiq_core`, so no script spells a
//! status code or decides a rule core owns: `ST` names each status code (`ST.pending`, ...),
//! `CLAIMABLE` and `TERMINAL` are the sets `JobStatus::is_claimable` and `is_terminal` describe,
//! and `DEP` holds `DependencyClass::of` for each code (`'m'` met, `'o'` open, `'f'` failed), the
//! verdict an enqueue applies to the dependency statuses it reads. For dependency edges it gives
//! `EDGE`, the storage code of each `EdgePolicy`, `ON_FAIL`, what `EdgePolicy::on_child_failed`
//! does for each code (`'c'` cancel the dependent, `'f'` fail it, `'r'` release it, `'s'` settle
//! the edge, `'x'` remove it), and `SETTLED`, the `edge_settled` verdict per policy and status
//! (`SETTLED[policy .. ':' .. status]`), and the events tables of [`crate::event_header`].
//! Every script then carries `events.lua`, the events stream helpers, so each writes the events
//! of the changes it makes. The general scripts then carry `prelude.lua`'s shared helpers;
//! `enqueue_plain.lua` runs with the header and `events.lua` alone. The enqueue script and
//! `small.lua` also carry `dedup.lua`, the dedup record helpers. The two scripts that claim
//! (`claim.lua` and `workflow.lua`'s fair claim) also carry `take.lua`, the one claim step, so a
//! job is claimed the same way by either; `admin.lua` carries it for the token-bucket refill its
//! rate-limit wait reads, the arithmetic a claim applies.
//! `schedulers.lua` (scheduler upsert and removal) runs with the header and `events.lua` alone.

use flexiq_core::flow::{edge_settled, ChildFailure, EdgePolicy};
use flexiq_core::start::DependencyClass;
use flexiq_core::JobStatus;

use crate::event_header::events_header;

const EVENTS: &str = include_str!("lua/events.lua");
const PRELUDE: &str = include_str!("lua/prelude.lua");
const TAKE: &str = include_str!("lua/take.lua");
const DEDUP: &str = include_str!("lua/dedup.lua");

/// Every edge policy, in code order.
const POLICIES: [EdgePolicy; 5] = [
    EdgePolicy::CancelDependent,
    EdgePolicy::FailParent,
    EdgePolicy::ContinueParent,
    EdgePolicy::IgnoreDependency,
    EdgePolicy::RemoveDependency,
];

/// One script: a Redis Functions library holding one function, both named
/// `flexiq_<role>_<sha1>` after the library's code, so a library's name says what it holds and
/// another build's libraries never collide with this one's.
///
/// The library's top level (the generated header, `events.lua` and the shared helpers it
/// carries) runs once, when the server loads it: the tables and helper functions it defines
/// are built once, not on every call as a script's would be. The function declares `KEYS` and
/// `ARGV` as the library's locals, sets them from its arguments, resets the per-call state of
/// the helpers (`ev_begin`, `prelude_begin`, `take_begin`) and runs the script's body.
#[derive(Debug)]
pub(crate) struct Script {
    pub(crate) src: String,
    pub(crate) name: String,
}

/// The shared Lua a script carries after the header and `events.lua`.
#[derive(Clone, Copy)]
enum Carries {
    /// Nothing more: the script defines what else it uses.
    Bare,
    /// `prelude.lua`.
    Prelude,
    /// `prelude.lua` and `take.lua`, the claim step.
    Claiming,
    /// `prelude.lua` and `dedup.lua`, the dedup record helpers.
    Deduping,
}

impl Script {
    fn new(role: &str, header: &str, carries: Carries, body: &str) -> Self {
        let shared = match carries {
            Carries::Bare => String::new(),
            Carries::Prelude => format!("{PRELUDE}\n"),
            Carries::Claiming => format!("{PRELUDE}\n{TAKE}\n"),
            Carries::Deduping => format!("{PRELUDE}\n{DEDUP}\n"),
        };
        let begins = match carries {
            Carries::Bare => "  ev_begin()\n",
            Carries::Prelude | Carries::Deduping => "  ev_begin()\n  prelude_begin()\n",
            Carries::Claiming => "  ev_begin()\n  prelude_begin()\n  take_begin()\n",
        };
        let code = |name: &str| {
            format!(
                "#!lua name={name}\nlocal KEYS, ARGV\n{header}{EVENTS}\n{shared}\
                 redis.register_function('{name}', function(keys, args)\n  KEYS, ARGV = keys, args\n\
                 {begins}{body}\nend)\n"
            )
        };
        let name = format!("flexiq_{role}_{}", fred::util::sha1_hash(&code("")));
        Script { src: code(&name), name }
    }
}

/// Every script the store runs.
#[derive(Debug)]
pub(crate) struct Scripts {
    pub(crate) enqueue: Script,
    pub(crate) enqueue_plain: Script,
    pub(crate) claim: Script,
    pub(crate) commit: Script,
    pub(crate) complete: Script,
    pub(crate) archive: Script,
    pub(crate) retention: Script,
    pub(crate) small: Script,
    pub(crate) workflow: Script,
    pub(crate) admin: Script,
    pub(crate) reschedule: Script,
    pub(crate) schedulers: Script,
}

impl Scripts {
    pub(crate) fn new() -> Self {
        let h = status_header();
        let script = |role: &str, carries: Carries, body: &str| Script::new(role, &h, carries, body);
        Scripts {
            enqueue: script("enqueue", Carries::Deduping, include_str!("lua/enqueue.lua")),
            enqueue_plain: script("enqueue_plain", Carries::Bare, include_str!("lua/enqueue_plain.lua")),
            claim: script("claim", Carries::Claiming, include_str!("lua/claim.lua")),
            commit: script("commit", Carries::Prelude, include_str!("lua/commit.lua")),
            complete: script("complete", Carries::Prelude, include_str!("lua/complete.lua")),
            archive: script("archive", Carries::Prelude, include_str!("lua/archive.lua")),
            retention: script("retention", Carries::Prelude, include_str!("lua/retention.lua")),
            small: script("small", Carries::Deduping, include_str!("lua/small.lua")),
            workflow: script("workflow", Carries::Claiming, include_str!("lua/workflow.lua")),
            admin: script("admin", Carries::Claiming, include_str!("lua/admin.lua")),
            reschedule: script("reschedule", Carries::Prelude, include_str!("lua/reschedule.lua")),
            schedulers: script("schedulers", Carries::Bare, include_str!("lua/schedulers.lua")),
        }
    }

    pub(crate) fn all(&self) -> [&Script; 12] {
        [
            &self.enqueue,
            &self.enqueue_plain,
            &self.claim,
            &self.commit,
            &self.complete,
            &self.archive,
            &self.retention,
            &self.small,
            &self.workflow,
            &self.admin,
            &self.reschedule,
            &self.schedulers,
        ]
    }
}

/// The Lua set `{ [code] = true, ... }` of the statuses `keep` selects.
fn status_set(keep: fn(JobStatus) -> bool) -> String {
    let codes: Vec<String> = JobStatus::ALL
        .into_iter()
        .filter(|st| keep(*st))
        .map(|st| format!("[{}] = true", st.code()))
        .collect();
    format!("{{ {} }}", codes.join(", "))
}

/// The letter `ON_FAIL` gives a child failure.
pub(crate) fn failure_letter(f: ChildFailure) -> char {
    match f {
        ChildFailure::CancelParent => 'c',
        ChildFailure::FailParent => 'f',
        ChildFailure::ReleaseParent => 'r',
        ChildFailure::SettleEdge => 's',
        ChildFailure::RemoveEdge => 'x',
    }
}

/// The header lines for dependency edges: `EDGE`, `ON_FAIL` and `SETTLED`.
fn edge_header() -> String {
    let names: Vec<String> = POLICIES.iter().map(|p| format!("{} = {}", p.as_str(), p.code())).collect();
    let on_fail: Vec<String> = POLICIES
        .iter()
        .map(|p| format!("[{}] = '{}'", p.code(), failure_letter(p.on_child_failed())))
        .collect();
    let settled: Vec<String> = POLICIES
        .iter()
        .flat_map(|p| {
            JobStatus::ALL
                .into_iter()
                .filter(|st| edge_settled(*p, *st))
                .map(|st| format!("['{}:{}'] = true", p.code(), st.code()))
        })
        .collect();
    format!(
        "local EDGE = {{ {} }}\nlocal ON_FAIL = {{ {} }}\nlocal SETTLED = {{ {} }}\n",
        names.join(", "),
        on_fail.join(", "),
        settled.join(", "),
    )
}

/// The header every script starts with: status codes, the claimable and terminal sets, the
/// dependency verdict per status code, the edge tables and the events tables
/// ([`events_header`]), all from `flexiq_core`.
pub(crate) fn status_header() -> String {
    let names: Vec<String> =
        JobStatus::ALL.into_iter().map(|st| format!("{} = {}", st.as_str(), st.code())).collect();
    let dep: Vec<String> = JobStatus::ALL
        .into_iter()
        .map(|st| format!("[{}] = '{}'", st.code(), DependencyClass::of(st).letter()))
        .collect();
    format!(
        "-- Generated from flexiq_core::JobStatus, flexiq_core::start::DependencyClass, \
         flexiq_core::flow and flexiq_core::events.\n\
         local ST = {{ {} }}\n\
         local CLAIMABLE = {}\n\
         local TERMINAL = {}\n\
         local DEP = {{ {} }}\n\
         {}{}",
        names.join(", "),
        status_set(JobStatus::is_claimable),
        status_set(JobStatus::is_terminal),
        dep.join(", "),
        edge_header(),
        events_header(),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// The entries `k = v` or `[k] = v` of the generated table `name`.
    fn table(header: &str, name: &str) -> BTreeMap<String, String> {
        let line = header
            .lines()
            .find(|l| l.starts_with(&format!("local {name} = {{")))
            .unwrap_or_else(|| panic!("{name} in the header"));
        let inner = &line[line.find('{').unwrap() + 1..line.rfind('}').unwrap()];
        inner
            .split(',')
            .filter(|e| !e.trim().is_empty())
            .map(|e| {
                let (k, v) = e.split_once('=').unwrap();
                (k.trim().trim_matches(['[', ']']).to_string(), v.trim().trim_matches('\'').to_string())
            })
            .collect()
    }

    #[test]
    fn the_header_matches_job_status() {
        let h = status_header();
        let st = table(&h, "ST");
        assert_eq!(st.len(), JobStatus::ALL.len());
        for s in JobStatus::ALL {
            assert_eq!(st[s.as_str()], s.code().to_string(), "{s}");
        }
        let claimable = table(&h, "CLAIMABLE");
        let terminal = table(&h, "TERMINAL");
        let dep = table(&h, "DEP");
        for s in JobStatus::ALL {
            let code = s.code().to_string();
            assert_eq!(claimable.contains_key(&code), s.is_claimable(), "{s}");
            assert_eq!(terminal.contains_key(&code), s.is_terminal(), "{s}");
            assert_eq!(dep[&code], DependencyClass::of(s).letter().to_string(), "{s}");
        }
    }

    #[test]
    fn the_header_matches_edge_policies() {
        let h = status_header();
        let edge = table(&h, "EDGE");
        let on_fail = table(&h, "ON_FAIL");
        let settled = table(&h, "SETTLED");
        assert_eq!(edge.len(), POLICIES.len());
        for p in POLICIES {
            assert_eq!(EdgePolicy::from_code(p.code()).unwrap(), p);
            assert_eq!(edge[p.as_str()], p.code().to_string(), "{p}");
            assert_eq!(
                on_fail[&p.code().to_string()],
                failure_letter(p.on_child_failed()).to_string(),
                "{p}"
            );
            for st in JobStatus::ALL {
                let key = format!("'{}:{}'", p.code(), st.code());
                assert_eq!(settled.contains_key(&key), edge_settled(p, st), "{p} {st}");
            }
        }
        let letters: std::collections::BTreeSet<String> = on_fail.values().cloned().collect();
        assert_eq!(letters.len(), POLICIES.len(), "one letter per failure");
        for body in [PRELUDE, include_str!("lua/admin.lua"), include_str!("lua/enqueue.lua")] {
            assert!(
                !body.contains("local EDGE =") && !body.contains("local SETTLED ="),
                "one generated table"
            );
        }
    }

    /// Whether a line of Lua spells a status code where the generated names belong: a digit
    /// right after a status comparison or assignment (`o.st == 2`), a status field write
    /// (`'st', '1'`), a status index key (`ix:s:0`, `ix_sq(1, q)`) or a status counter.
    fn spells_code(line: &str) -> bool {
        let code = line.split("--").next().unwrap_or_default();
        let patterns = ["st == ", "st ~= ", "st = ", "'st', '", "ix:s:", "ix_sq(", "ix_st(", "delta(cnt, '"];
        patterns.iter().any(|p| {
            code.match_indices(p).any(|(at, _)| {
                let word_start = !code[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
                word_start && code[at + p.len()..].starts_with(|c: char| c.is_ascii_digit())
            })
        })
    }

    #[test]
    fn every_script_is_a_library_of_one_function_after_the_header_and_spells_no_status_code() {
        let h = status_header();
        let scripts = Scripts::new();
        let mut names = std::collections::BTreeSet::new();
        for s in scripts.all() {
            let preamble = format!("#!lua name={}\nlocal KEYS, ARGV\n", s.name);
            assert!(s.src.starts_with(&preamble), "{}", s.name);
            assert!(s.src[preamble.len()..].starts_with(&h), "{}", s.name);
            assert!(s.name.starts_with("flexiq_") && s.name.len() > 47, "{}", s.name);
            assert!(s.name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'), "{}", s.name);
            let register = format!("redis.register_function('{}', function(keys, args)", s.name);
            assert_eq!(s.src.matches(&register).count(), 1, "{}", s.name);
            assert!(s.src.ends_with("\nend)\n"), "{}", s.name);
            assert!(names.insert(s.name.clone()), "two libraries named {}", s.name);
            let body = &s.src[preamble.len() + h.len()..];
            assert!(!body.contains("local ST =") && !body.contains("local DEP ="), "one generated table");
            assert!(!body.contains("local CLAIMABLE =") && !body.contains("local TERMINAL ="));
            let hit = body.lines().find(|l| spells_code(l));
            assert!(hit.is_none(), "a script spells a status code: {hit:?}");
        }
        assert_eq!(scripts.enqueue_plain.name, Scripts::new().enqueue_plain.name, "names are stable");
        assert!(spells_code("if o.st == 2 then") && spells_code("acc('ZADD', ix_sq(0, q), 0, m)"));
        assert!(!spells_code("if o.st == ST.completed then -- st == 2"));
        assert!(!spells_code("if #first == 0 then"));
    }

    /// The per-call state of the shared helpers is reset by the function, never built at the
    /// library's top level, where it would outlive the call (and `KEYS` is not set yet).
    #[test]
    fn every_function_resets_the_per_call_state_of_what_it_carries() {
        for s in Scripts::new().all() {
            let function = &s.src[s.src.find("redis.register_function(").unwrap()..];
            assert!(function.contains("\n  ev_begin()\n"), "{}", s.name);
            let carries_prelude = s.src.contains("local function prelude_begin()");
            assert_eq!(function.contains("\n  prelude_begin()\n"), carries_prelude, "{}", s.name);
            let carries_take = s.src.contains("local function take_begin()");
            assert_eq!(function.contains("\n  take_begin()\n"), carries_take, "{}", s.name);
        }
        for shared in [EVENTS, PRELUDE, TAKE, DEDUP] {
            for line in shared.lines().filter(|l| l.starts_with("local ") && !l.starts_with("local function"))
            {
                assert!(!line.contains("KEYS") && !line.contains("ARGV"), "per-call state at load: {line}");
                let per_call =
                    ["EV_KEY", "EV_ON", "EV_JSON", "EV_ONE", "B,", "WAKE", "ACC", "DELTA", "TAKE_EV"];
                if per_call.iter().any(|v| line.contains(v)) {
                    assert!(!line.contains('='), "per-call state built at load: {line}");
                }
            }
        }
    }
}
