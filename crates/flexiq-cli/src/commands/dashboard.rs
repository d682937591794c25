//! `flexiq dashboard`: serve the web dashboard and its JSON API on a store, and manage the
//! dashboard's credentials (`set-password`, `create-token`, ...), which live in the store.
//!
//! With no `--url` (and no `FLEXIQ_URL`) it serves the demo's SQLite file in the current
//! directory, so `flexiq demo` then `flexiq dashboard` shows the demo's jobs.

use std::io::{BufRead as _, IsTerminal as _};
use std::net::SocketAddr;
use std::path::Path;

use clap::{Args, Subcommand};
use flexiq_dashboard::{auth, serve, DashboardConfig};
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::connect::{open, Open, URL_ENV};
use crate::demo::DEFAULT_DB;
use crate::error::{CliError, CliResult};
use crate::output::{table, Output};

/// `flexiq dashboard [OPTIONS] [COMMAND]`
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct DashboardArgs {
    /// Manage credentials instead of serving.
    #[command(subcommand)]
    pub action: Option<DashboardCmd>,
    /// Address to listen on. A non-loopback address needs a password or token configured.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    pub bind: SocketAddr,
    /// Refuse every write (pause, retry, settings, ...) with 403.
    #[arg(long)]
    pub read_only: bool,
    /// Serve /metrics without authentication (for a Prometheus scraper).
    #[arg(long)]
    pub public_metrics: bool,
}

/// Credential commands.
#[derive(Debug, Subcommand)]
pub enum DashboardCmd {
    /// Set the dashboard password (prompted on a terminal, else read as one line of stdin).
    SetPassword,
    /// Remove the dashboard password.
    ClearPassword,
    /// Create a bearer token for API clients; the token is printed once.
    CreateToken {
        /// Who the token is for (recorded with every write it makes).
        name: String,
    },
    /// List bearer tokens (ids and names; secrets are not kept).
    ListTokens,
    /// Revoke a bearer token by id.
    RevokeToken {
        /// The token id (`fqd_<id>_...`).
        id: String,
    },
}

fn with_default_url(g: &GlobalArgs) -> GlobalArgs {
    let mut g = g.clone();
    let env_set = std::env::var(URL_ENV).is_ok_and(|u| !u.trim().is_empty());
    if g.url.is_none() && !env_set {
        g.url = Some(DEFAULT_DB.to_string());
    }
    g
}

fn read_password() -> CliResult<String> {
    let password = if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("new dashboard password: ")?;
        let again = rpassword::prompt_password("again: ")?;
        if first != again {
            return Err(CliError::invalid("the two passwords differ"));
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line.trim_end_matches(['\r', '\n']).to_string()
    };
    Ok(password)
}

fn api(e: flexiq_dashboard::ApiError) -> CliError {
    match e.status.as_u16() {
        400 => CliError::invalid(e.message),
        404 => CliError::not_found(e.message),
        _ => CliError::other(e.message),
    }
}

/// Runs `flexiq dashboard ...`.
pub async fn run(g: &GlobalArgs, args: DashboardArgs, out: Output) -> CliResult {
    let g = with_default_url(g);
    if g.url.as_deref() == Some(DEFAULT_DB) && !Path::new(DEFAULT_DB).exists() {
        return Err(CliError::not_found(format!(
            "no --url given and the demo's {DEFAULT_DB} is not here: run `flexiq demo` first or pass --url"
        )));
    }
    let q = open(&g, Open::Existing).await?;
    match args.action {
        None => {
            let config = DashboardConfig {
                bind: args.bind,
                read_only: args.read_only,
                public_metrics: args.public_metrics,
                ..DashboardConfig::default()
            };
            let mut server = serve(q, config).await.map_err(|e| CliError::other(e.to_string()))?;
            let addr = server.local_addr();
            out.emit(&json!({ "listening": addr.to_string() }), || {
                outln!("flexiq dashboard on http://{addr} (ctrl-c stops it)")
            })?;
            let interrupted = tokio::select! {
                r = tokio::signal::ctrl_c() => Some(r),
                r = server.wait() => {
                    r?;
                    None
                }
            };
            if let Some(signal) = interrupted {
                signal?;
                server.shutdown().await?;
            }
            Ok(())
        }
        Some(DashboardCmd::SetPassword) => {
            let password = read_password()?;
            auth::set_password(&q, &password).await.map_err(api)?;
            out.emit(&json!({ "password": "set" }), || outln!("dashboard password set"))
        }
        Some(DashboardCmd::ClearPassword) => {
            if !auth::clear_password(&q).await.map_err(api)? {
                return Err(CliError::not_found("no dashboard password is set"));
            }
            out.emit(&json!({ "password": "cleared" }), || outln!("dashboard password cleared"))
        }
        Some(DashboardCmd::CreateToken { name }) => {
            let t = auth::create_token(&q, &name).await.map_err(api)?;
            out.emit(&json!({ "id": t.id, "name": name, "token": t.token }), || outln!("{}", t.token))
        }
        Some(DashboardCmd::ListTokens) => {
            let all = auth::list_tokens(&q).await.map_err(api)?;
            let rows: Vec<_> = all
                .iter()
                .map(|(id, r)| json!({ "id": id, "name": r.name, "created_at": r.created_at }))
                .collect();
            out.emit(&rows, || {
                let mut t = table(["id", "name", "created_at"]);
                for (id, r) in &all {
                    t.add_row(vec![id.clone(), r.name.clone(), r.created_at.to_string()]);
                }
                outln!("{t}");
            })
        }
        Some(DashboardCmd::RevokeToken { id }) => {
            if !auth::revoke_token(&q, &id).await.map_err(api)? {
                return Err(CliError::not_found(format!("dashboard token {id} not found")));
            }
            out.emit(&json!({ "revoked": id }), || outln!("token {id} revoked"))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::error::{EXIT_OK, EXIT_OTHER};
    use crate::run_cli;

    fn cli(url: &str, args: &[&str]) -> i32 {
        let mut all = vec!["flexiq".to_string(), "--url".to_string(), url.to_string()];
        all.extend(args.iter().map(|a| a.to_string()));
        run_cli(all)
    }

    #[test]
    fn tokens_are_created_listed_and_revoked_in_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("dash.db").display());
        assert_eq!(cli(&url, &["migrate"]), EXIT_OK);
        assert_eq!(cli(&url, &["dashboard", "create-token", "ci"]), EXIT_OK);
        let rt = tokio::runtime::Runtime::new().unwrap();
        let tokens = rt.block_on(async {
            let q = flexiq::connect(&url, flexiq::ConnectOptions::default()).await.unwrap();
            let t = flexiq_dashboard::auth::list_tokens(&q).await.unwrap();
            q.close().await.unwrap();
            t
        });
        assert_eq!(tokens.len(), 1);
        assert_eq!(tokens[0].1.name, "ci");
        assert_eq!(cli(&url, &["dashboard", "revoke-token", &tokens[0].0]), EXIT_OK);
        assert_eq!(cli(&url, &["dashboard", "revoke-token", &tokens[0].0]), crate::error::EXIT_NOT_FOUND);
    }

    #[test]
    fn an_exposed_bind_without_credentials_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("dash.db").display());
        assert_eq!(cli(&url, &["migrate"]), EXIT_OK);
        assert_eq!(cli(&url, &["dashboard", "--bind", "0.0.0.0:0"]), EXIT_OTHER);
    }
}
