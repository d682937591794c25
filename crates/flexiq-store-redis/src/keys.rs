//! The key layout. Every key of a namespace starts with the hash tag `{prefix:namespace}`,
//! so each script touches one Cluster slot; deployment-wide keys (settings, contract floor)
//! live under `{prefix}`. The full layout is documented in `docs/redis.md`.

/// Key names of one namespace.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    /// `{prefix:namespace}`: passed to every script as `KEYS[1]`.
    pub(crate) base: String,
    /// `{prefix}`: deployment-wide keys.
    pub(crate) global: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str, namespace: &str) -> Self {
        Keys { base: format!("{{{prefix}:{namespace}}}"), global: format!("{{{prefix}}}") }
    }

    pub(crate) fn k(&self, suffix: &str) -> String {
        format!("{}:{suffix}", self.base)
    }

    pub(crate) fn job(&self, id: &str) -> String {
        format!("{}:j:{id}", self.base)
    }

    pub(crate) fn archived(&self, id: &str) -> String {
        format!("{}:a:{id}", self.base)
    }

    /// The dedup record of `key` (see `lua/dedup.lua`).
    pub(crate) fn dedup(&self, key: &str) -> String {
        format!("{}:dd:{key}", self.base)
    }

    /// The hash of scheduler `id` (see `lua/schedulers.lua`).
    pub(crate) fn scheduler(&self, id: &str) -> String {
        format!("{}:js:{id}", self.base)
    }

    pub(crate) fn settings(&self) -> String {
        format!("{}:settings", self.global)
    }

    pub(crate) fn meta(&self) -> String {
        format!("{}:meta", self.global)
    }
}

/// A sixteen-digit zero-padded number, so lexical order is numeric order.
pub(crate) fn pad(n: i64) -> String {
    format!("{:016}", n.max(0))
}

/// The member of a listing index: `<pad(time)>|<id>`.
pub(crate) fn member(time: i64, id: &str) -> String {
    format!("{}|{id}", pad(time))
}

/// The negative `run_at`s a ready-set member keeps in order: from `1 - LIFO_SPAN` up.
const LIFO_SPAN: i64 = 1_000_000_000_000_000;

/// The member of a queue's ready set, `<run_at>|<id>`, as `prelude.lua`'s `rmem` writes it:
/// sixteen characters whose byte order is numeric order, so that members of one priority sort
/// by `run_at`, negative (LIFO) ones first: zero-padded digits for `run_at >= 0`, and `-` (which
/// sorts below every digit) and fifteen digits of `LIFO_SPAN + run_at` below 0.
pub(crate) fn ready_member(run_at: i64, id: &str) -> String {
    if run_at < 0 {
        format!("-{:015}|{id}", LIFO_SPAN + run_at.max(1 - LIFO_SPAN))
    } else {
        format!("{run_at:016}|{id}")
    }
}

/// The id part of a listing member.
pub(crate) fn member_id(m: &str) -> &str {
    m.get(17..).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_sort_by_time_then_id() {
        let a = member(5, "b");
        let b = member(40, "a");
        assert!(a < b);
        assert_eq!(member_id(&b), "a");
        let k = Keys::new("fq", "ns");
        assert_eq!(k.job("x"), "{fq:ns}:j:x");
        assert_eq!(k.settings(), "{fq}:settings");
    }

    #[test]
    fn ready_members_sort_by_run_at_lifo_first() {
        let order = [i64::MIN, -1_700_000_000_005, -1_700_000_000_000, -1, 0, 1, 1_700_000_000_000];
        let members: Vec<String> = order.iter().map(|r| ready_member(*r, "id")).collect();
        assert!(members.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()), "{members:?}");
        assert!(members.iter().all(|m| member_id(m) == "id" && m.len() == 19), "{members:?}");
        assert_eq!(ready_member(-1, "a"), "-999999999999999|a");
        assert_eq!(ready_member(7, "a"), "0000000000000007|a");
    }
}
