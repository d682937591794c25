//! Hook definitions: one JSON setting per hook under `webhook:<name>`.
//!
//! Settings are deployment-wide and every worker and dashboard on the store reads the same
//! ones, so a hook added from the dashboard (or [`set_hook`]) is picked up by the elected
//! dispatcher of each namespace on its next round without a restart. A delivery reads its
//! hook again when it runs, so a changed URL or a rotated secret applies to retries too.

use std::collections::BTreeMap;

use flexiq_core::events::validate_kind_names;
use flexiq_core::options::validate_name;
use serde::{Deserialize, Serialize};

use super::HOOK_PREFIX;
use crate::error::{Error, Result};
use crate::queue::Queue;

/// Most secrets a hook holds at once: the current one and, during a rotation, the next.
pub const MAX_SECRETS: usize = 2;

/// Longest hook name (bytes).
pub const MAX_HOOK_NAME_BYTES: usize = 100;

/// The default retries of a delivery after its first attempt.
pub const DEFAULT_MAX_RETRIES: u32 = 8;

/// The default timeout of one delivery attempt (s).
pub const DEFAULT_TIMEOUT_SECS: u64 = 10;

/// One hook, as stored (JSON) in the `webhook:<name>` setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// Where deliveries are POSTed (`http` or `https`).
    pub url: String,
    /// Event names delivered (built-in kinds such as `completed`, `dead`, or custom event
    /// names; `custom` for every custom event); empty delivers every event.
    #[serde(default)]
    pub events: Vec<String>,
    /// Namespaces whose events are delivered; empty means every namespace.
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Signing secrets: one, or two while rotating (every delivery is signed with each).
    pub secrets: Vec<String>,
    /// Allow targets that resolve to loopback, private, link-local or other non-public
    /// addresses (default false: such deliveries are refused).
    #[serde(default)]
    pub allow_private: bool,
    /// Retries of a failed delivery after its first attempt, with exponential backoff
    /// (default 8).
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// Timeout of one attempt, seconds (default 10).
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
}

fn default_max_retries() -> u32 {
    DEFAULT_MAX_RETRIES
}

fn default_timeout_secs() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

impl WebhookConfig {
    /// A hook POSTing every event to `url`, signed with `secret`.
    pub fn new(url: impl Into<String>, secret: impl Into<String>) -> Self {
        WebhookConfig {
            url: url.into(),
            events: Vec::new(),
            namespaces: Vec::new(),
            secrets: vec![secret.into()],
            allow_private: false,
            max_retries: DEFAULT_MAX_RETRIES,
            timeout_secs: DEFAULT_TIMEOUT_SECS,
        }
    }

    /// Checks the URL, secrets, filters and limits; `InvalidArgument` names the hook.
    pub fn validate(&self, name: &str) -> Result<()> {
        validate_hook_name(name)?;
        let url = reqwest::Url::parse(&self.url)
            .map_err(|e| Error::invalid(format!("webhook {name}: url {:?} is not a URL: {e}", self.url)))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(Error::invalid(format!(
                "webhook {name}: url {} must be http(s) with a host",
                self.url
            )));
        }
        if self.secrets.is_empty() || self.secrets.len() > MAX_SECRETS {
            return Err(Error::invalid(format!(
                "webhook {name}: needs 1 or {MAX_SECRETS} secrets (two while rotating), got {}",
                self.secrets.len()
            )));
        }
        if self.secrets.iter().any(|s| s.len() < 16) {
            return Err(Error::invalid(format!("webhook {name}: every secret must be at least 16 bytes")));
        }
        validate_kind_names(&self.events)
            .map_err(|e| Error::invalid(format!("webhook {name}: events: {e}")))?;
        for ns in &self.namespaces {
            validate_name("namespace", ns).map_err(|e| Error::invalid(format!("webhook {name}: {e}")))?;
        }
        if self.max_retries > flexiq_core::options::MAX_RETRIES_LIMIT {
            return Err(Error::invalid(format!(
                "webhook {name}: max_retries {} is too large",
                self.max_retries
            )));
        }
        if !(1..=300).contains(&self.timeout_secs) {
            return Err(Error::invalid(format!(
                "webhook {name}: timeout_secs {} must be between 1 and 300",
                self.timeout_secs
            )));
        }
        Ok(())
    }

    /// Whether an event named `event_name` in `namespace` goes to this hook.
    pub(crate) fn wants(&self, namespace: &str, ev: &flexiq_core::events::QueueEvent) -> bool {
        (self.namespaces.is_empty() || self.namespaces.iter().any(|n| n == namespace))
            && flexiq_core::events::kind_matches(&self.events, ev)
    }
}

/// Checks a hook name: 1 to 100 bytes of letters, digits, `-`, `_` and `.`.
pub fn validate_hook_name(name: &str) -> Result<()> {
    if name.is_empty()
        || name.len() > MAX_HOOK_NAME_BYTES
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(Error::invalid(format!(
            "webhook name {name:?} must be 1 to {MAX_HOOK_NAME_BYTES} letters, digits, '-', '_' or '.'"
        )));
    }
    Ok(())
}

fn key(name: &str) -> String {
    format!("{HOOK_PREFIX}{name}")
}

/// Parses and checks one stored hook.
pub fn parse_hook(name: &str, value: &str) -> Result<WebhookConfig> {
    let cfg: WebhookConfig = serde_json::from_str(value)
        .map_err(|e| Error::invalid(format!("webhook {name}: setting is not a valid hook: {e}")))?;
    cfg.validate(name)?;
    Ok(cfg)
}

/// Creates or replaces the hook `name` (validated first).
pub async fn set_hook(queue: &Queue, name: &str, cfg: &WebhookConfig) -> Result<()> {
    cfg.validate(name)?;
    let value = serde_json::to_string(cfg)
        .map_err(|e| Error::invalid(format!("webhook {name}: cannot serialise: {e}")))?;
    queue.set_setting(&key(name), &value).await
}

/// The hook `name`, or `None` when there is none. A stored value that is not a valid hook is
/// `InvalidArgument`.
pub async fn get_hook(queue: &Queue, name: &str) -> Result<Option<WebhookConfig>> {
    validate_hook_name(name)?;
    match queue.get_setting(&key(name)).await? {
        Some(v) => parse_hook(name, &v).map(Some),
        None => Ok(None),
    }
}

/// Removes the hook `name`; `false` when there was none. Deliveries already queued for it
/// fail without retrying when they run.
pub async fn delete_hook(queue: &Queue, name: &str) -> Result<bool> {
    validate_hook_name(name)?;
    queue.delete_setting(&key(name)).await
}

/// Every stored hook by name, each parsed (a broken one is its error, so the dashboard can
/// show it).
pub async fn list_hooks(queue: &Queue) -> Result<BTreeMap<String, Result<WebhookConfig>>> {
    Ok(queue
        .list_settings()
        .await?
        .into_iter()
        .filter_map(|(k, v)| {
            let name = k.strip_prefix(HOOK_PREFIX)?.to_string();
            let parsed = parse_hook(&name, &v);
            Some((name, parsed))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_are_checked_and_name_the_hook() {
        let ok = WebhookConfig::new("https://example.com/hook", "0123456789abcdef");
        ok.validate("orders").unwrap();
        let bad = |c: WebhookConfig| c.validate("orders").unwrap_err().to_string();
        assert!(bad(WebhookConfig { url: "ftp://x/".into(), ..ok.clone() }).contains("http(s)"));
        assert!(bad(WebhookConfig { url: "not a url".into(), ..ok.clone() }).contains("not a URL"));
        assert!(bad(WebhookConfig { secrets: vec![], ..ok.clone() }).contains("1 or 2 secrets"));
        assert!(bad(WebhookConfig { secrets: vec!["a".repeat(16); 3], ..ok.clone() }).contains("1 or 2"));
        assert!(bad(WebhookConfig { secrets: vec!["short".into()], ..ok.clone() }).contains("16 bytes"));
        assert!(bad(WebhookConfig { events: vec![String::new()], ..ok.clone() }).contains("events"));
        assert!(bad(WebhookConfig { timeout_secs: 0, ..ok.clone() }).contains("timeout_secs"));
        assert!(bad(WebhookConfig { timeout_secs: 0, ..ok.clone() }).contains("webhook orders: timeout_secs"));
        assert!(validate_hook_name("a b").is_err());
        assert!(validate_hook_name("").is_err());
        let e = parse_hook("orders", r#"{"url":"https://x.io","secrets":["0123456789abcdef"],"typo":1}"#);
        assert!(e.unwrap_err().to_string().contains("webhook orders"));
        let parsed =
            parse_hook("orders", r#"{"url":"https://x.io","secrets":["0123456789abcdef"]}"#).unwrap();
        assert_eq!((parsed.max_retries, parsed.timeout_secs, parsed.allow_private), (8, 10, false));
    }
}
