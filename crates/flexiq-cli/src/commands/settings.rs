//! `flexiq settings get | set | delete | list`: the deployment-wide key/value store.
//!
//! Keys under the runtime's reserved prefixes (`retention:`, `contract:`, ...) back state the
//! runtime reads; `set` refuses them unless `--force` says the operator means it.

use clap::Subcommand;
use flexiq::core::{is_reserved_setting, reserved_setting_prefixes};
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult};
use crate::output::{short, table, Output};

/// `flexiq settings ...`
#[derive(Debug, Subcommand)]
pub enum SettingsCmd {
    /// Print one value (exit 3 when the key was never set).
    Get {
        /// The key.
        key: String,
    },
    /// Insert or overwrite a value (last write wins).
    Set {
        /// The key.
        key: String,
        /// The value (opaque text).
        #[arg(allow_hyphen_values = true)]
        value: String,
        /// Write even under a reserved prefix owned by the runtime.
        #[arg(long)]
        force: bool,
    },
    /// Remove a key (exit 3 when it did not exist).
    Delete {
        /// The key.
        key: String,
    },
    /// Every key and value, runtime-owned keys included.
    List,
}

/// Runs a `settings` subcommand.
pub async fn run(g: &GlobalArgs, cmd: SettingsCmd, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    match cmd {
        SettingsCmd::Get { key } => {
            let value = q
                .get_setting(&key)
                .await?
                .ok_or_else(|| CliError::not_found(format!("setting {key} not found")))?;
            out.emit(&json!({ "key": key, "value": value }), || outln!("{value}"))
        }
        SettingsCmd::Set { key, value, force } => {
            if is_reserved_setting(&key) && !force {
                return Err(CliError::invalid(format!(
                    "setting {key} is under a reserved prefix ({}): pass --force to write it anyway",
                    reserved_setting_prefixes().join(" ")
                )));
            }
            q.set_setting(&key, &value).await?;
            out.emit(&json!({ "key": key, "value": value }), || outln!("setting {key} set"))
        }
        SettingsCmd::Delete { key } => {
            if !q.delete_setting(&key).await? {
                return Err(CliError::not_found(format!("setting {key} not found")));
            }
            out.emit(&json!({ "deleted": key }), || outln!("setting {key} deleted"))
        }
        SettingsCmd::List => {
            let all = q.list_settings().await?;
            out.emit(&all, || {
                if all.is_empty() {
                    outln!("no settings");
                    return;
                }
                let mut t = table(["key", "value"]);
                for (k, v) in &all {
                    t.add_row(vec![k.clone(), short(v, 80)]);
                }
                outln!("{t}");
            })
        }
    }
}
