//! Inputs drawn near each parser's grammar, in the byte format its check reads.
//!
//! Arbitrary bytes rarely get past a parser's first refusal (a checksum, a JSON brace, a cron
//! field count), and a proptest run has hundreds of cases, not libFuzzer's millions. So each
//! target also gets a strategy that assembles its input from valid pieces, near misses and
//! edge values (cursors sealed with a correct checksum around a mutated body, cron fields built
//! from numbers, ranges, steps and names, real zone names beside junk), which reaches the code
//! behind the first check.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use flexiq_core::cursor::fingerprint;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{json, Value};

/// Joins fields into the newline-separated form every check reads.
fn join(fields: &[String]) -> Vec<u8> {
    fields.join("\n").into_bytes()
}

/// Arbitrary bytes: what libFuzzer starts from.
pub(crate) fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..200)
}

/// Short text of any characters but newline (which separates fields).
fn junk() -> impl Strategy<Value = String> {
    "[^\n]{0,24}"
}

/// An `i64` that is mostly a plausible Unix ms time, sometimes an edge value.
fn time_ms() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => 0i64..4_102_444_800_000,
        1 => select(vec![0, -1, 1, i64::MIN, i64::MAX, i64::MAX - 1, 253_402_300_799_000]),
        1 => any::<i64>(),
    ]
}

fn opt_field<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// A known UUID, a fresh one in some spelling, or junk.
fn uuid_text() -> impl Strategy<Value = String> {
    let fresh = (any::<u128>(), 0..4usize, any::<bool>()).prop_map(|(n, form, upper)| {
        let u = uuid::Uuid::from_u128(n);
        let s = match form {
            0 => u.hyphenated().to_string(),
            1 => u.simple().to_string(),
            2 => u.braced().to_string(),
            _ => u.urn().to_string(),
        };
        if upper {
            s.to_uppercase()
        } else {
            s
        }
    });
    let mutated = (fresh.clone(), any::<prop::sample::Index>(), any::<char>()).prop_map(|(s, i, c)| {
        let mut chars: Vec<char> = s.chars().collect();
        let at = i.index(chars.len());
        chars[at] = c;
        chars.into_iter().collect()
    });
    prop_oneof![3 => fresh, 2 => mutated, 1 => junk()]
}

pub(crate) fn cursor() -> impl Strategy<Value = Vec<u8>> {
    let listing = prop_oneof![
        4 => select(vec!["jobs", "dead_letters", "archived", "schedulers"]).prop_map(str::to_string),
        1 => "[a-z_|]{0,12}",
    ];
    let fp_text = |fp: u64| {
        prop_oneof![
            4 => Just(format!("{fp:x}")),
            1 => Just(format!("{fp:X}")),
            1 => Just(format!("+{fp:x}")),
            1 => Just(format!("00{fp:x}")),
            1 => junk(),
        ]
    };
    let key_text = prop_oneof![
        8 => any::<i64>().prop_map(|k| k.to_string()),
        1 => select(vec!["+5", "-0", "99999999999999999999", "", "1e3", " 1"]).prop_map(str::to_string),
        1 => junk(),
    ];
    let version = select(vec!["c1", "c1", "c1", "c1", "c1", "c1", "c0", "c2", ""]);
    (listing, any::<u64>(), prop::bool::weighted(0.85))
        .prop_flat_map(move |(listing, fp, same_listing)| {
            let asked = if same_listing { Just(listing.clone()).boxed() } else { "[a-z_]{0,12}".boxed() };
            let fp_text = prop_oneof![6 => Just(format!("{fp:x}")), 1 => fp_text(fp)];
            (Just(listing), Just(fp), asked, version.clone(), fp_text, key_text.clone(), junk(), 0..6u8)
        })
        .prop_flat_map(|(listing, fp, asked, ver, fp_text, key, id, seal)| {
            let body = format!("{ver}|{listing}|{fp_text}|{key}|{id}");
            let raw = match seal {
                // A correct checksum, so decoding reaches the fields.
                0..=3 => format!("{body}|{:x}", fingerprint(&[&body])),
                4 => format!("{body}|{:x}", fingerprint(&[&body]).wrapping_add(1)),
                _ => body,
            };
            let flip = (any::<prop::sample::Index>(), any::<u8>());
            let flips = prop_oneof![4 => Just(Vec::new()), 1 => prop::collection::vec(flip, 1..3)];
            (Just(raw.into_bytes()), flips, Just(asked), Just(fp), select(vec!["", " ", "\t", "="]))
        })
        .prop_map(|(mut raw, flips, asked, fp, pad)| {
            for (i, b) in flips {
                let at = i.index(raw.len().max(1)).min(raw.len().saturating_sub(1));
                if let Some(x) = raw.get_mut(at) {
                    *x ^= b;
                }
            }
            let text = format!("{pad}{}{pad}", URL_SAFE_NO_PAD.encode(raw));
            join(&[text, asked, fp.to_string()])
        })
}

pub(crate) fn rate() -> impl Strategy<Value = Vec<u8>> {
    let count = prop_oneof![
        3 => (1u32..1_000).prop_map(|n| n.to_string()),
        1 => any::<u32>().prop_map(|n| n.to_string()),
        1 => select(vec!["0", "-1", "+5", "4294967296", "1.5", "", "x", "٣"]).prop_map(str::to_string),
    ];
    let unit = select(vec!["s", "m", "h", "d", "S", "sec", "", " s", "s/"]);
    let text = (select(vec!["", " ", "\t"]), count, select(vec!["/", "/", "", "//", " / "]), unit)
        .prop_map(|(ws, n, slash, unit)| format!("{ws}{n}{slash}{unit}{ws}"));
    let text = prop_oneof![4 => text, 1 => junk()];
    (text, any::<f64>(), time_ms(), any::<u32>(), time_ms()).prop_map(|(text, tokens, at, want, now)| {
        join(&[text, tokens.to_bits().to_string(), at.to_string(), want.to_string(), now.to_string()])
    })
}

/// A JSON value a few levels deep, with the awkward corners of the format.
fn json_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        prop::num::f64::NORMAL.prop_map(|f| json!(f)),
        "[^\n]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(select(vec!["a", "id", "tenant", "0", "1", "é", ""]), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
    .boxed()
}

/// JSON text of `value`, sometimes cut short or with one character changed.
fn json_text(value: impl Strategy<Value = Value>) -> impl Strategy<Value = String> {
    (value, 0..6u8, any::<prop::sample::Index>(), any::<char>()).prop_map(|(v, how, i, c)| {
        let text = if how == 0 { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) };
        let mut chars: Vec<char> = text.expect("JSON encodes").chars().collect();
        let at = i.index(chars.len().max(1)).min(chars.len());
        match how {
            1 => chars.truncate(at),
            2 if at < chars.len() => chars[at] = c,
            _ => {}
        }
        chars.into_iter().collect()
    })
}

pub(crate) fn metadata() -> impl Strategy<Value = Vec<u8>> {
    (
        json_text(json_value()).prop_map(|t| t.replace('\n', " ")),
        any::<prop::sample::Index>(),
        0..4usize,
        junk(),
    )
        .prop_map(|(text, i, len, other)| {
            let chars: Vec<char> = text.chars().collect();
            let from = i.index(chars.len().max(1)).min(chars.len());
            let needle: String =
                if len == 0 { other } else { chars[from..(from + len).min(chars.len())].iter().collect() };
            join(&[text, needle, String::new()])
        })
}

pub(crate) fn fairness() -> impl Strategy<Value = Vec<u8>> {
    let segment = select(vec!["tenant", "id", "0", "1", "+1", "01", "a b", "é", "", "~", "/"]);
    let path = prop::collection::vec(segment, 1..4).prop_map(|s| s.join("."));
    let path = prop_oneof![5 => path, 1 => junk(), 1 => Just("a".repeat(256))];
    let leaf = prop_oneof![
        "[^\n]{0,12}".prop_map(Value::String),
        Just(json!("é".repeat(200))),
        any::<i64>().prop_map(|n| json!(n)),
        prop::num::f64::ANY.prop_map(|f| json!(f)),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
        json_value(),
    ];
    (path, leaf, 0..4u8, bytes()).prop_map(|(path, leaf, how, noise)| {
        // Wrap the leaf so the path leads to it (arrays where a segment reads as an index).
        let mut payload = leaf;
        for seg in path.split('.').collect::<Vec<_>>().into_iter().rev() {
            payload = match seg.parse::<usize>() {
                Ok(i) if how != 1 && i < 4 => {
                    Value::Array(vec![json!("x"); i].into_iter().chain([payload]).collect())
                }
                _ => json!({ seg: payload }),
            };
        }
        let mut body = serde_json::to_vec(&payload).expect("JSON encodes");
        match how {
            2 => body = noise,
            3 => body.truncate(body.len() / 2),
            _ => {}
        }
        let mut out = path.into_bytes();
        out.push(b'\n');
        out.extend(body);
        out
    })
}

pub(crate) fn settings() -> impl Strategy<Value = Vec<u8>> {
    // Every reserved prefix, and near misses of them.
    let mut prefixes = flexiq_core::settings::RESERVED_SETTING_PREFIXES.to_vec();
    prefixes.extend(["", "retention", "Auth:", "flexiq."]);
    let prefix = select(prefixes);
    let key = (prefix, junk(), prop_oneof![5 => Just(0usize), 1 => 1_000usize..1_030])
        .prop_map(|(p, rest, pad)| format!("{p}{rest}{}", "k".repeat(pad)));
    (key, junk()).prop_map(|(k, v)| join(&[k, v]))
}

/// One cron field: a list of numbers, ranges, steps, names and the special characters.
fn cron_field() -> impl Strategy<Value = String> {
    let name = select(vec![
        "MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN", "JAN", "FEB", "MAR", "JUN", "DEC", "mon", "FOO",
    ])
    .prop_map(str::to_string);
    let atom = prop_oneof![
        6 => (0u32..60).prop_map(|n| n.to_string()),
        1 => (0u32..100).prop_map(|n| n.to_string()),
        4 => Just("*".to_string()),
        1 => select(vec!["?", "L", "W", "LW", "5L", "15W", "L-3", "#", "-", "/", ""])
            .prop_map(str::to_string),
        2 => name.clone(),
    ];
    let piece = prop_oneof![
        4 => atom.clone(),
        2 => (atom.clone(), atom.clone()).prop_map(|(a, b)| format!("{a}-{b}")),
        2 => (atom.clone(), 0u32..70).prop_map(|(a, n)| format!("{a}/{n}")),
        1 => (atom, atom_range(), 0u32..20).prop_map(|(a, b, n)| format!("{a}-{b}/{n}")),
        1 => (name, 0u32..7).prop_map(|(d, n)| format!("{d}#{n}")),
    ];
    prop::collection::vec(piece, 1..4).prop_map(|p| p.join(","))
}

fn atom_range() -> impl Strategy<Value = String> {
    (0u32..70).prop_map(|n| n.to_string())
}

/// A cron pattern of four to seven fields, mostly five or six.
fn cron_pattern() -> BoxedStrategy<String> {
    let fields = prop_oneof![1 => Just(4usize), 4 => Just(5), 3 => Just(6), 1 => Just(7)];
    let built = fields.prop_flat_map(|n| prop::collection::vec(cron_field(), n)).prop_map(|f| f.join(" "));
    let known = select(vec![
        "* * * * *",
        "0 9 * * MON-FRI",
        "30 2 * * *",
        "*/15 * * * * *",
        "0 0 29 2 *",
        "0 0 L * *",
    ])
    .prop_map(str::to_string);
    prop_oneof![5 => built, 3 => known, 1 => junk()].boxed()
}

/// A zone: mostly a real IANA name, sometimes a near miss or junk.
fn zone() -> impl Strategy<Value = String> {
    let real = select(chrono_tz::TZ_VARIANTS.to_vec()).prop_map(|tz| tz.name().to_string());
    let dst = select(vec![
        "Europe/Berlin",
        "America/New_York",
        "Australia/Lord_Howe",
        "Asia/Kathmandu",
        "America/Santiago",
    ])
    .prop_map(str::to_string);
    prop_oneof![
        2 => Just(String::new()),
        3 => real.clone(),
        3 => dst,
        1 => real.prop_map(|z| z.to_lowercase()),
        1 => junk(),
    ]
}

fn catch_up() -> impl Strategy<Value = String> {
    select(vec!["", "latest", "none", "0", "1", "3", "1000", "1001", "x"]).prop_map(str::to_string)
}

pub(crate) fn cron() -> impl Strategy<Value = Vec<u8>> {
    // Mostly short gaps between rounds: a long one walks up to a thousand slots each round.
    let step = prop_oneof![6 => 0u64..600_000, 2 => 0u64..86_400_000, 1 => 0u64..3_456_000_000];
    let window = (prop::option::of(time_ms()), prop::option::of(time_ms()));
    (cron_pattern(), zone(), time_ms(), step, window, prop::option::of(0u64..9), any::<bool>(), catch_up())
        .prop_map(|(pattern, tz, now, step, (start, end), limit, immediately, catch_up)| {
            join(&[
                pattern,
                tz,
                now.to_string(),
                step.to_string(),
                opt_field(start),
                opt_field(end),
                opt_field(limit),
                if immediately { "1" } else { "0" }.to_string(),
                catch_up,
            ])
        })
}

/// Mostly `None`: an option a producer rarely sets.
fn rarely<T: std::fmt::Debug>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Option<T>> {
    prop::option::weighted(0.3, s)
}

/// Enqueue options as JSON, each field mostly absent, else plausible or at an edge.
fn options_json() -> BoxedStrategy<Value> {
    let name =
        prop_oneof![12 => "[a-z]{1,8}", 1 => Just(String::new()), 1 => Just("x".repeat(256)), 1 => junk()];
    let dedup = (
        name.clone(),
        select(vec!["simple", "throttle", "debounce", "keep_last_if_active", "keepLastIfActive", "often"]),
        prop::option::of(prop_oneof![
            1 => Just(0u64),
            4 => 1u64..100_000,
            1 => Just(31_536_000_000),
            1 => any::<u64>(),
        ]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(id, mode, ttl, extend, replace)| {
            json!({ "id": id, "mode": mode, "ttl_ms": ttl, "extend": extend, "replace": replace })
        });
    let metadata = prop_oneof![
        json_value().prop_map(|v| serde_json::to_string(&v).expect("JSON encodes")),
        Just("{\"a\":1}".to_string()),
        junk(),
    ];
    let deps = prop_oneof![3 => Just(Vec::new()), 1 => prop::collection::vec(uuid_text(), 1..3)].prop_map(
        |mut d| {
            if d.len() == 2 {
                d[1] = d[0].clone();
            }
            d
        },
    );
    let ints = (
        rarely(prop_oneof![
            4 => -10i64..10,
            1 => Just(1 << 21),
            1 => Just((1 << 21) + 1),
            1 => any::<i32>().prop_map(i64::from),
        ]),
        rarely(prop_oneof![4 => 0u64..10_000, 1 => any::<u64>()]),
        rarely(time_ms()),
        rarely(prop_oneof![4 => 0u32..20, 1 => Just(10_001), 1 => any::<u32>()]),
        rarely((0u64..5_000, 0u64..5_000)),
        rarely(prop_oneof![1 => Just(0u64), 4 => any::<u64>()]),
    );
    let names = (rarely(name.clone()), rarely(name.clone()), rarely(name.clone()), rarely(name));
    (ints, names, rarely(metadata), deps, any::<bool>(), rarely(dedup), 0u8..8)
        .prop_map(
            |(
                (priority, delay, run_at, retries, backoff, timeout),
                (queue, unique, group, run_id),
                meta,
                deps,
                lifo,
                dedup,
                sparse,
            )| {
                let mut o = json!({
                    "queue": queue, "priority": priority, "max_retries": retries,
                    "backoff": backoff.map(|(b, m)| json!({"base_ms": b, "max_ms": m})),
                    "timeout_ms": timeout, "metadata": meta, "depends_on": deps, "lifo": lifo, "dedup": dedup,
                });
                // Most options leave the conflicting fields out, so the build gets further.
                if sparse < 2 {
                    o["delay_ms"] = json!(delay);
                    o["run_at"] = json!(run_at);
                }
                if sparse == 0 {
                    o["unique_key"] = json!(unique);
                    o["group_key"] = json!(group);
                    o["workflow_run_id"] = json!(run_id);
                }
                if sparse >= 4 {
                    o["lifo"] = json!(false);
                    o["dedup"] = Value::Null;
                }
                o
            },
        )
        .boxed()
}

pub(crate) fn enqueue_options() -> impl Strategy<Value = Vec<u8>> {
    let task = prop_oneof![4 => Just("t".to_string()), 1 => junk()];
    (task, time_ms(), 0u8..10, prop::option::of(time_ms()), json_text(options_json())).prop_map(
        |(task, now, code, expiry, opts)| {
            let mut out = join(&[task, now.to_string(), code.to_string(), opt_field(expiry)]);
            out.push(b'\n');
            out.extend(opts.into_bytes());
            out
        },
    )
}

pub(crate) fn scheduler_spec() -> impl Strategy<Value = Vec<u8>> {
    let repeat = prop_oneof![
        (cron_pattern(), zone())
            .prop_map(|(p, tz)| json!({"cron": {"pattern": p, "tz": (!tz.is_empty()).then_some(tz)}})),
        prop_oneof![Just(0u64), 1u64..100_000, Just(u64::MAX), any::<u64>()]
            .prop_map(|ms| json!({"every": {"every_ms": ms}})),
    ];
    let catch = prop_oneof![
        Just(json!("latest")),
        Just(json!("none")),
        prop_oneof![Just(0u32), 1u32..5, Just(1_001), any::<u32>()].prop_map(|m| json!({"all": {"max": m}})),
    ];
    let rule = (
        repeat,
        prop::option::of(prop_oneof![0u64..5, any::<u64>()]),
        prop::option::of(time_ms()),
        prop::option::of(time_ms()),
        any::<bool>(),
        catch,
    )
        .prop_map(|(repeat, limit, start, end, immediately, catch_up)| {
            json!({"repeat": repeat, "limit": limit, "start_at_ms": start, "end_at_ms": end,
                   "immediately": immediately, "catch_up": catch_up})
        });
    let spec = (rule.boxed(), options_json(), prop_oneof![3 => Just("tick".to_string()), 1 => junk()])
        .prop_map(|(rule, options, task)| {
            json!({"rule": rule, "template": {"task": task, "payload": [1], "options": options}})
        });
    let state = (
        prop::option::of(time_ms()),
        prop::option::of(time_ms()),
        prop_oneof![0u64..5, any::<u64>()],
        time_ms(),
        time_ms(),
    );
    (state, json_text(spec)).prop_map(|((next, last, iterations, created, now), spec)| {
        let mut out = join(&[
            opt_field(next),
            opt_field(last),
            iterations.to_string(),
            created.to_string(),
            now.to_string(),
        ]);
        out.push(b'\n');
        out.extend(spec.into_bytes());
        out
    })
}

const KINDS: [&str; 18] = [
    "enqueued",
    "active",
    "progress",
    "completed",
    "failed",
    "retried",
    "dead",
    "stalled",
    "cancelled",
    "deduplicated",
    "paused",
    "resumed",
    "removed",
    "requeued",
    "suspended",
    "released",
    "custom",
    "Completed",
];

pub(crate) fn events() -> impl Strategy<Value = Vec<u8>> {
    let name = prop_oneof![
        3 => select(KINDS.to_vec()).prop_map(str::to_string),
        3 => "[a-z.]{1,12}",
        1 => junk(),
        1 => Just("n".repeat(201)),
    ];
    let kinds = prop::collection::vec(name.clone(), 0..4).prop_map(|k| k.join(","));
    let after = prop_oneof![Just(String::new()), "[0-9]{1,20}-[0-9]{1,4}", junk(), Just("9".repeat(65))];
    let event = (
        name.clone(),
        select(KINDS[..17].to_vec()),
        prop::option::of(any::<u32>()),
        any::<i64>(),
        json_value(),
    )
        .prop_map(|(name, kind, attempt, at, data)| {
            json!({"id": "1-0", "kind": kind, "name": name, "job_id": null, "queue": "q", "task": null,
                   "attempt": attempt, "at_ms": at, "data": data})
        });
    (name, kinds, after, json_text(event)).prop_map(|(n, k, a, e)| join(&[n, k, a, e]))
}

pub(crate) fn job_id() -> impl Strategy<Value = Vec<u8>> {
    (uuid_text(), time_ms()).prop_map(|(id, at)| join(&[id, at.to_string()]))
}

pub(crate) fn names() -> impl Strategy<Value = Vec<u8>> {
    let known = select(vec![
        "pending",
        "running",
        "completed",
        "failed",
        "dead",
        "cancelled",
        "suspended",
        "waiting",
        "cancel_dependent",
        "fail_parent",
        "failParent",
        "continue_parent",
        "ignore_dependency",
        "removeDependency",
        "simple",
        "throttle",
        "debounce",
        "keep_last_if_active",
        "keepLastIfActive",
        "archived_jobs",
        "deadLetter",
        "task_logs",
        "jobErrors",
    ]);
    let name = prop_oneof![
        4 => known.clone().prop_map(str::to_string),
        1 => known.clone().prop_map(|n| n.to_uppercase()),
        1 => known.prop_map(|n| format!(" {n}")),
        1 => junk(),
    ];
    (name, prop_oneof![0u16..12, any::<u16>()]).prop_map(|(n, c)| join(&[n, c.to_string()]))
}

pub(crate) fn flow() -> impl Strategy<Value = Vec<u8>> {
    let pool: Vec<String> = (1..=3)
        .map(|i| uuid::Uuid::from_u128(0x0190_a3b2_c4d5_7e6f_8a9b_0000_0000_0000 + i).to_string())
        .collect();
    let id = prop_oneof![12 => Just(String::new()), 4 => select(pool.clone()), 1 => junk()];
    let dep = prop_oneof![16 => Just(String::new()), 4 => select(pool), 1 => uuid_text()];
    let policy = prop_oneof![
        8 => Just(""),
        8 => select(vec!["fail_parent", "continueParent", "ignore_dependency", "remove_dependency"]),
        1 => select(vec!["cancel_dependent", "x"]),
    ];
    let ns = prop_oneof![12 => Just(""), 4 => Just("ns"), 1 => Just("other")];
    let task = prop_oneof![16 => Just("t".to_string()), 1 => junk().prop_map(|t| t.replace('|', ""))];
    let node = (0usize..5, policy, id, dep, ns, task)
        .prop_map(|(d, p, id, dep, ns, task)| [d.to_string(), p.into(), id, dep, ns.into(), task]);
    (prop::collection::vec(node, 1..12), time_ms(), prop::bool::weighted(0.9)).prop_map(
        |(mut nodes, now, plain_root)| {
            if plain_root {
                nodes[0][1].clear();
            }
            let mut fields = vec!["ns".to_string(), now.to_string()];
            fields.extend(nodes.iter().map(|n| n.join("|")));
            join(&fields)
        },
    )
}

pub(crate) fn stored_records() -> impl Strategy<Value = Vec<u8>> {
    let s = || prop_oneof![4 => "[a-z]{0,6}".boxed(), 1 => junk().boxed()];
    let n = || {
        prop_oneof![
            any::<i64>().prop_map(|v| json!(v)),
            any::<u64>().prop_map(|v| json!(v)),
            Just(json!(-1)),
            Just(json!(1.5))
        ]
    };
    let status = select(vec!["pending", "waiting", "completed", "Done"]);
    let record = prop_oneof![
        (s(), s(), n(), n(), prop::option::of(s())).prop_map(|(a, b, x, y, e)| {
            json!({"id": a, "original_job_id": b, "queue": "q", "task_name": "t", "payload": [0, 255],
                   "error": e, "retry_count": x, "failed_at": y, "metadata": null})
        }),
        (s(), s(), n(), n()).prop_map(|(a, b, x, y)| {
            json!({"id": a, "job_id": b, "attempt": x, "error": "e", "failed_at": y})
        }),
        (s(), n(), n(), n()).prop_map(|(a, x, y, z)| {
            json!({"id": a, "queues": [a], "concurrency": x, "host": "h", "pid": y, "started_at": z,
                   "heartbeat_at": 0})
        }),
        (s(), n(), n(), any::<bool>()).prop_map(|(a, x, y, ok)| {
            json!({"job_id": a, "task": "t", "queue": "q", "attempt": 1, "success": ok, "duration_ms": x,
                   "recorded_at": y})
        }),
        (n(), n(), prop::option::of(n())).prop_map(|(x, y, z)| {
            json!({"archived_jobs": x, "dead_letter": z, "task_logs": y, "task_metrics": null,
                   "job_errors": 1})
        }),
        (any::<bool>(), n(), n()).prop_map(|(e, x, y)| {
            json!({"enabled": e, "defaulted": false, "namespace": "n", "reported_at": x,
                   "windows": {"task_logs": y, "dead_letter": null, "bogus": 1}})
        }),
        (s(), status.clone()).prop_map(|(a, st)| {
            json!({"nodes": [{"id": a, "task": "t", "status": st}], "edges": [{"from": a, "to": "b"}]})
        }),
        (s(), n()).prop_map(|(a, x)| json!({"name": a, "holder": "h", "expires_at": x})),
        (s(), n(), prop::option::of(prop::num::f64::ANY), status).prop_map(|(a, x, progress, st)| {
            json!({"id": a, "namespace": "n", "queue": "q", "task": "t", "payload": [1], "priority": 0,
                   "status": st, "attempt": 1, "max_retries": 3, "backoff": {"base_ms": 1, "max_ms": 2},
                   "created_at": x, "run_at": x, "started_at": null, "heartbeat_at": null,
                   "finished_at": null, "worker_id": null, "result": null, "last_error": null,
                   "unique_key": null, "metadata": null, "progress": progress, "timeout_ms": null,
                   "cancel_requested": false, "depends_on": [a], "group_key": null, "workflow_run_id": null,
                   "workflow_stage_id": null, "workflow_version": null, "claim_seq": x})
        }),
        json_value(),
    ];
    json_text(record).prop_map(String::into_bytes)
}

pub(crate) fn metrics() -> impl Strategy<Value = Vec<u8>> {
    let row = (select(vec!["a", "b"]), prop_oneof![0u64..10_000, any::<u64>()], time_ms(), any::<bool>())
        .prop_map(|(task, ms, at, ok)| {
            json!({"job_id": "j", "task": task, "queue": "q", "attempt": 1, "success": ok, "duration_ms": ms,
                   "recorded_at": at})
        });
    let width = prop_oneof![select(vec![0u64, 1, 3, 1_000, 60_000, i64::MAX as u64, u64::MAX]), any::<u64>()];
    (width, prop::collection::vec(row, 0..12)).prop_map(|(w, rows)| {
        let mut out = format!("{w}\n").into_bytes();
        out.extend(serde_json::to_vec(&rows).expect("JSON encodes"));
        out
    })
}
