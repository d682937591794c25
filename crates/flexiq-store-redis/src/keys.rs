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
}
