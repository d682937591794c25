//! PostgreSQL and Redis for the store suites.
//!
//! On this machine kind both servers run before CI starts. Elsewhere they may be stopped or not
//! installed: then this starts them with the distribution's own commands, installing the
//! packages with apt-get when the binaries are missing. A suite never skips a store because a
//! server was down.

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const PG_ADDR: &str = "127.0.0.1:5432";
const REDIS_ADDR: &str = "127.0.0.1:6379";

/// Makes sure both servers answer, or says why not.
pub(crate) fn ensure() -> Result<(), String> {
    ensure_postgres()?;
    ensure_redis()?;
    Ok(())
}

fn answers(addr: &str) -> bool {
    let addr: SocketAddr = addr.parse().expect("static loopback address");
    TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_ok()
}

fn wait_for(addr: &str, what: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if answers(addr) {
            println!("xtask: {what} answers on {addr}");
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(format!("{what} did not come up on {addr} within 30 s"))
}

fn sh(script: &str) -> Result<(), String> {
    let status = Command::new("bash").arg("-c").arg(script).status().map_err(|e| format!("bash: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{script}` failed with {status}"))
    }
}

fn apt_install(packages: &str) -> Result<(), String> {
    sh(&format!(
        "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq {packages} >/dev/null"
    ))
}

fn ensure_postgres() -> Result<(), String> {
    if answers(PG_ADDR) {
        return Ok(());
    }
    println!("xtask: PostgreSQL is not answering on {PG_ADDR}; starting it");
    if !Path::new("/etc/postgresql").exists() {
        apt_install("postgresql")?;
    }
    sh("for v in $(ls /etc/postgresql); do pg_ctlcluster --skip-systemctl-redirect $v main start || true; done")?;
    wait_for(PG_ADDR, "PostgreSQL")?;
    // Loopback connections as postgres with no password, and the `test` database the suites use.
    sh("f=$(ls /etc/postgresql/*/main/pg_hba.conf | head -1); \
        if ! grep -q '^host all all 127.0.0.1/32 trust' \"$f\"; then \
          sed -i '1i host all all 127.0.0.1/32 trust' \"$f\"; \
          for v in $(ls /etc/postgresql); do pg_ctlcluster --skip-systemctl-redirect $v main reload || true; done; \
        fi")?;
    sh("runuser -u postgres -- psql -h 127.0.0.1 -tAc \"select 1 from pg_database where datname='test'\" | grep -q 1 \
        || runuser -u postgres -- createdb -h 127.0.0.1 test")
}

fn ensure_redis() -> Result<(), String> {
    // The Redis Cluster suite starts its own servers, so the binaries must be here even when a
    // server already answers on the standard port.
    if Command::new("bash")
        .arg("-c")
        .arg("command -v redis-server && command -v redis-cli")
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true)
    {
        apt_install("redis-server")?;
    }
    if answers(REDIS_ADDR) {
        return Ok(());
    }
    println!("xtask: Redis is not answering on {REDIS_ADDR}; starting it");
    sh("mkdir -p /var/lib/redis /var/log/redis && redis-server --daemonize yes --bind 127.0.0.1 --port 6379 \
        --save '' --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log")?;
    wait_for(REDIS_ADDR, "Redis")
}
