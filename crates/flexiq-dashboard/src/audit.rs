//! The record of every write made through the dashboard: who, what, when.
//!
//! Each successful write is published as a custom event named [`AUDIT_EVENT`] on the
//! namespace's events stream (`flexiq events tail --from-start --kind dashboard.write` shows them), so
//! it is stored by the same store as the change, on every backend. When the events stream is
//! switched off for the namespace, the record goes to a setting under `auth:audit:` instead
//! (ordered by its UUIDv7 key), so no write goes unrecorded.

use serde::Serialize;
use serde_json::json;

use crate::state::Dashboard;

/// Name of the custom event recording a dashboard write.
pub const AUDIT_EVENT: &str = "dashboard.write";
/// Prefix of the settings holding write records while events are switched off.
pub const AUDIT_SETTING_PREFIX: &str = "auth:audit:";

/// One write, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteRecord {
    /// Who: `password`, `token:<name>` or `anonymous`.
    pub who: String,
    /// The client address.
    pub client: Option<String>,
    /// HTTP method.
    pub method: String,
    /// Request path (the what: `/api/v1/queues/emails/pause`).
    pub path: String,
    /// HTTP status answered.
    pub status: u16,
    /// When (Unix ms).
    pub at_ms: i64,
}

/// Records `record`; a failure to record is logged, never turned into a failed write (the
/// write already committed).
pub async fn record(app: &Dashboard, record: WriteRecord) {
    let data = json!(record);
    match app.queue.publish_event(AUDIT_EVENT, data.clone(), None, None).await {
        Ok(_) => {}
        Err(e) if e.kind() == Some(flexiq::ErrorKind::Conflict) => {
            let key = format!("{AUDIT_SETTING_PREFIX}{}", uuid::Uuid::now_v7());
            if let Err(e) = app.queue.set_setting(&key, &data.to_string()).await {
                tracing::warn!(error = %e, path = %record.path, "could not record dashboard write");
            }
        }
        Err(e) => tracing::warn!(error = %e, path = %record.path, "could not record dashboard write"),
    }
}
