//! A private three-master Redis Cluster for one test binary, started on first use from the
//! installed `redis-server` on free loopback ports, in a temporary folder of its own, with no
//! persistence (`--save ""`, `--appendonly no`).
//!
//! A test binary ends without running destructors of statics, so the servers are handed to a
//! small watchdog shell process that waits for the test process to exit, then kills them and
//! removes the folder; a binary killed outright is cleaned up the same way.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const REDIS_SERVER: &str = "redis-server";
const REDIS_CLI: &str = "redis-cli";
const MASTERS: usize = 3;
/// How long the cluster may take to form.
const FORM_TIMEOUT: Duration = Duration::from_secs(60);

/// The running cluster: one node's client port per master.
pub struct Cluster {
    pub ports: Vec<u16>,
    /// The servers and their watchdog, held for the life of the test process (the watchdog
    /// ends them all after it).
    _processes: Vec<Child>,
}

impl Cluster {
    /// `redis-cluster://127.0.0.1:<p1>?node=127.0.0.1:<p2>&node=127.0.0.1:<p3>`.
    pub fn url(&self) -> String {
        let mut url = format!("redis-cluster://127.0.0.1:{}", self.ports[0]);
        for (i, p) in self.ports[1..].iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(&format!("node=127.0.0.1:{p}"));
        }
        url
    }
}

/// The cluster of this test binary, started by the first caller. When it cannot start, every
/// caller fails with the first attempt's reason (no test starts another).
pub fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
    let started = CLUSTER.get_or_init(|| {
        std::panic::catch_unwind(start).map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        })
    });
    match started {
        Ok(c) => c,
        Err(why) => panic!("the test Redis Cluster did not start: {why}"),
    }
}

/// `count` distinct free loopback ports (all held open while choosing, so none repeats).
fn free_ports(count: usize) -> Vec<u16> {
    let held: Vec<TcpListener> =
        (0..count).map(|_| TcpListener::bind("127.0.0.1:0").expect("bind a free port")).collect();
    held.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

fn installed(program: &str) -> bool {
    Command::new(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

fn start() -> Cluster {
    for program in [REDIS_SERVER, REDIS_CLI] {
        assert!(
            installed(program),
            "{program} is not installed: the Redis Cluster tests need it (apt-get install -y redis-server)"
        );
    }
    let dir: PathBuf = tempfile::Builder::new().prefix("flexiq-cluster-").tempdir().unwrap().keep();
    let ports = free_ports(2 * MASTERS);
    let (client, bus) = ports.split_at(MASTERS);
    let mut servers = Vec::new();
    for (&port, &bus) in client.iter().zip(bus) {
        let node_dir = dir.join(port.to_string());
        std::fs::create_dir_all(&node_dir).unwrap();
        let child = Command::new(REDIS_SERVER)
            .args(["--port", &port.to_string(), "--cluster-port", &bus.to_string(), "--bind", "127.0.0.1"])
            .args(["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"])
            .args(["--save", "", "--appendonly", "no", "--protected-mode", "no", "--daemonize", "no"])
            .arg("--cluster-config-file")
            .arg(node_dir.join("nodes.conf"))
            .arg("--dir")
            .arg(&node_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        servers.push(child);
    }
    let pids: Vec<u32> = servers.iter().map(Child::id).collect();
    servers.push(watch(&pids, &dir));
    let deadline = Instant::now() + FORM_TIMEOUT;
    for &port in client {
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "cluster node on port {port} did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let nodes: Vec<String> = client.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let out = Command::new(REDIS_CLI)
        .args(["--cluster", "create"])
        .args(&nodes)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .stdin(Stdio::null())
        .output()
        .expect("run redis-cli --cluster create");
    assert!(
        out.status.success(),
        "redis-cli --cluster create failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for &port in client {
        while !cluster_ok(port) {
            assert!(Instant::now() < deadline, "cluster node on port {port} never reached cluster_state:ok");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Cluster { ports: client.to_vec(), _processes: servers }
}

/// Whether the node on `port` sees every slot served (`cluster_state:ok`).
fn cluster_ok(port: u16) -> bool {
    let out = Command::new(REDIS_CLI)
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "cluster", "info"])
        .stdin(Stdio::null())
        .output();
    out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).lines().any(|l| l.trim() == "cluster_state:ok"))
}

/// Starts the watchdog: it polls this process every 200 ms and, once it is gone, kills the
/// servers and removes `dir`.
fn watch(pids: &[u32], dir: &Path) -> Child {
    let script = r#"parent=$1; dir=$2; shift 2
while kill -0 "$parent" 2>/dev/null; do sleep 0.2; done
kill "$@" 2>/dev/null
for _ in 1 2 3 4 5 6 7 8 9 10; do
  alive=0; for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ "$alive" = 0 ] && break; sleep 0.2
done
kill -9 "$@" 2>/dev/null
rm -rf "$dir""#;
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("flexiq-cluster-watchdog")
        .arg(std::process::id().to_string())
        .arg(dir)
        .args(pids.iter().map(u32::to_string))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the cluster watchdog")
}
