//! Private PostgreSQL and Redis servers for the crash campaigns.
//!
//! A campaign restarts its server mid-run and drops every client connection, which must never
//! touch the shared servers other suites use. So each campaign starts its own instance on a
//! free port with its data in a temp directory, and stops it when dropped. A missing server
//! binary is an error that says what to install: a store is never skipped.

use std::net::TcpListener;
#[cfg(feature = "postgres")]
use std::path::{Path, PathBuf};
#[cfg(feature = "redis")]
use std::process::Child;
use std::process::{Command, Stdio};
use std::time::Duration;

use tempfile::TempDir;

/// What a campaign can do to its store's server. The calls block: run them off the async
/// runtime's threads (`tokio::task::block_in_place`).
pub(crate) trait ServerControl: Send {
    /// The store URL the campaign's processes connect to.
    fn url(&self) -> String;
    /// Stops the server and starts it again; `crash` stops it the hard way (no shutdown
    /// checkpoint or save: recovery from the log on start). Returns how it was stopped.
    fn restart(&mut self, crash: bool) -> Result<&'static str, String>;
    /// Closes every client connection to the campaign's database; returns how many.
    fn drop_connections(&mut self) -> Result<u64, String>;
}

/// A port nobody listened on a moment ago.
fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    l.local_addr().map(|a| a.port()).map_err(|e| format!("no free port: {e}"))
}

/// Runs `cmd`, failing with its output when it does not succeed.
fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{what}: could not run {cmd:?}: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(format!("{what} failed ({}): {cmd:?}\n{text}", out.status));
    }
    Ok(text)
}

/// A private PostgreSQL cluster (`initdb` + `pg_ctl`), run as the `postgres` OS user when this
/// process is root, since the server refuses to run as root.
#[cfg(feature = "postgres")]
pub(crate) struct PrivatePostgres {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    as_postgres: bool,
    schema: String,
    _dir: TempDir,
}

#[cfg(feature = "postgres")]
impl PrivatePostgres {
    /// Creates and starts a cluster with trust authentication on a free port.
    pub(crate) fn start(schema: &str) -> Result<Self, String> {
        let bin = pg_bin_dir()?;
        let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
        let as_postgres = is_root();
        if as_postgres {
            run(Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()), "chown data dir")?;
        }
        let data = dir.path().join("data");
        let port = free_port()?;
        let pg = PrivatePostgres { bin, data, port, as_postgres, schema: schema.to_string(), _dir: dir };
        let initdb = pg.bin.join("initdb");
        pg.run_pg(&initdb, &["-A", "trust", "-U", "postgres", "--no-sync", "-D"], "initdb")?;
        pg.ctl_start()?;
        Ok(pg)
    }

    /// Runs a server binary with `args` followed by the data directory, as the right user.
    fn run_pg(&self, bin: &Path, args: &[&str], what: &str) -> Result<String, String> {
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(bin);
            c
        } else {
            Command::new(bin)
        };
        cmd.args(args).arg(&self.data).stdin(Stdio::null());
        run(&mut cmd, what)
    }

    fn ctl_start(&self) -> Result<(), String> {
        let log = self.data.parent().expect("data dir has a parent").join("server.log");
        let opts = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c max_connections=200",
            self.port,
            self.data.display()
        );
        let ctl = self.bin.join("pg_ctl");
        let log = log.display().to_string();
        self.run_pg(&ctl, &["-w", "-t", "60", "-l", &log, "-o", &opts, "start", "-D"], "pg_ctl start")?;
        Ok(())
    }

    fn ctl_stop(&self, mode: &str) -> Result<(), String> {
        let ctl = self.bin.join("pg_ctl");
        self.run_pg(&ctl, &["-w", "-t", "60", "-m", mode, "stop", "-D"], "pg_ctl stop")?;
        Ok(())
    }

    /// A plain connection URL to the cluster's `postgres` database.
    pub(crate) fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

#[cfg(feature = "postgres")]
impl ServerControl for PrivatePostgres {
    fn url(&self) -> String {
        format!("{}?schema={}", self.admin_url(), self.schema)
    }

    fn restart(&mut self, crash: bool) -> Result<&'static str, String> {
        let mode = if crash { "immediate" } else { "fast" };
        self.ctl_stop(mode)?;
        std::thread::sleep(Duration::from_millis(300));
        self.ctl_start()?;
        Ok(if crash { "pg_ctl stop -m immediate" } else { "pg_ctl stop -m fast" })
    }

    fn drop_connections(&mut self) -> Result<u64, String> {
        let url = self.admin_url();
        let handle = tokio::runtime::Handle::current();
        let sql = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                   WHERE datname = 'postgres' AND pid <> pg_backend_pid() AND backend_type = 'client backend'";
        handle.block_on(async move {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .map_err(|e| format!("connect {url} to drop connections: {e}"))?;
            let conn = tokio::spawn(conn);
            let row = client.query_one(sql, &[]).await.map_err(|e| format!("pg_terminate_backend: {e}"))?;
            drop(client);
            let _ = conn.await;
            Ok(row.get::<_, i64>(0) as u64)
        })
    }
}

#[cfg(feature = "postgres")]
impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        if let Err(e) = self.ctl_stop("immediate") {
            eprintln!("stopping the private PostgreSQL on port {}: {e}", self.port);
        }
    }
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding `initdb` and `pg_ctl`.
#[cfg(feature = "postgres")]
fn pg_bin_dir() -> Result<PathBuf, String> {
    let root = Path::new("/usr/lib/postgresql");
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let v = e.file_name().to_string_lossy().split('.').next()?.parse::<u32>().ok()?;
                    let bin = e.path().join("bin");
                    (bin.join("initdb").exists() && bin.join("pg_ctl").exists()).then_some((v, bin))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "the PostgreSQL crash campaign needs its own server: no initdb/pg_ctl under \
         /usr/lib/postgresql/*/bin (install the postgresql server package)"
            .to_string()
    })
}

#[cfg(feature = "postgres")]
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A private `redis-server` with the append-only file on, fsynced every second.
///
/// `everysec` rather than `always`: Redis writes the AOF before it replies, so killing the
/// server process (the hard restart here) loses no acknowledged write either way; the two
/// differ only when the machine itself goes down, which a test cannot do.
#[cfg(feature = "redis")]
pub(crate) struct PrivateRedis {
    port: u16,
    child: Option<Child>,
    dir: TempDir,
}

#[cfg(feature = "redis")]
impl PrivateRedis {
    /// Starts a server on a free port with its AOF in a temp directory.
    pub(crate) fn start() -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
        let port = free_port()?;
        let mut r = PrivateRedis { port, child: None, dir };
        r.spawn()?;
        Ok(r)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("server.log"))
            .map_err(|e| format!("redis log: {e}"))?;
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--appendonly", "yes"])
            .args(["--appendfsync", "everysec", "--save", "", "--daemonize", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| format!("redis log: {e}"))?)
            .stderr(log)
            .spawn()
            .map_err(|e| {
                format!(
                    "the Redis crash campaign needs its own server: could not run redis-server \
                     (install the redis-server package): {e}"
                )
            })?;
        self.child = Some(child);
        for _ in 0..200 {
            if self.cli(&["PING"]).is_ok_and(|o| o.trim() == "PONG") {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!("private redis-server on port {} did not answer PING", self.port))
    }

    fn cli(&self, args: &[&str]) -> Result<String, String> {
        run(Command::new("redis-cli").args(["-p", &self.port.to_string()]).args(args), "redis-cli")
    }

    fn stop(&mut self, crash: bool) -> Result<(), String> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        if crash {
            child.kill().map_err(|e| format!("SIGKILL redis-server: {e}"))?;
        } else {
            // SHUTDOWN closes the connection without a reply; the exit is what counts.
            let _ = self.cli(&["SHUTDOWN"]);
        }
        let status = child.wait().map_err(|e| format!("wait for redis-server: {e}"))?;
        if !crash && !status.success() {
            return Err(format!("redis-server on port {} exited with {status} after SHUTDOWN", self.port));
        }
        Ok(())
    }
}

#[cfg(feature = "redis")]
impl ServerControl for PrivateRedis {
    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}?prefix=fqcrash", self.port)
    }

    fn restart(&mut self, crash: bool) -> Result<&'static str, String> {
        self.stop(crash)?;
        std::thread::sleep(Duration::from_millis(300));
        self.spawn()?;
        Ok(if crash { "SIGKILL redis-server" } else { "SHUTDOWN" })
    }

    fn drop_connections(&mut self) -> Result<u64, String> {
        let out = self.cli(&["CLIENT", "KILL", "TYPE", "normal"])?;
        out.trim().parse::<u64>().map_err(|_| format!("CLIENT KILL answered {out:?}"))
    }
}

#[cfg(feature = "redis")]
impl Drop for PrivateRedis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
