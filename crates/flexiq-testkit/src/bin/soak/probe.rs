//! What the soak watches of its own process: resident memory, open file descriptors and
//! established TCP connections to the store's server, read from `/proc` so no store client has
//! to report on itself.

use std::collections::HashSet;

/// One reading of the process's resources.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Reading {
    /// Resident set size (kB), `VmRSS` of `/proc/self/status`.
    pub(crate) rss_kb: u64,
    /// Entries of `/proc/self/fd`.
    pub(crate) fds: u64,
    /// Established TCP connections of this process whose remote port is the store's.
    pub(crate) conns: u64,
}

/// Reads the three figures; `server_port` is `None` for a store without a server (SQLite),
/// whose connection count is then zero.
pub(crate) fn read(server_port: Option<u16>) -> Reading {
    Reading {
        rss_kb: rss_kb(),
        fds: fd_links().len() as u64,
        conns: server_port.map(connections_to).unwrap_or(0),
    }
}

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn fd_links() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else { return Vec::new() };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

/// Socket inodes this process holds, matched against the kernel's TCP tables: a row counts
/// when it is established (state `01`), its remote port is `port` and its inode is ours.
fn connections_to(port: u16) -> u64 {
    let ours: HashSet<u64> = fd_links()
        .iter()
        .filter_map(|l| l.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')))
        .filter_map(|n| n.parse().ok())
        .collect();
    let mut count = 0;
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for row in text.lines().skip(1) {
            let cols: Vec<&str> = row.split_whitespace().collect();
            if cols.len() < 10 || cols[3] != "01" {
                continue;
            }
            let remote_port = cols[2].rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
            let inode: Option<u64> = cols[9].parse().ok();
            if remote_port == Some(port) && inode.is_some_and(|i| ours.contains(&i)) {
                count += 1;
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_process_has_memory_and_descriptors() {
        let r = read(None);
        assert!(r.rss_kb > 0, "{r:?}");
        assert!(r.fds >= 3, "{r:?}");
        assert_eq!(r.conns, 0);
    }

    #[test]
    fn a_connection_to_a_local_listener_is_counted() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let before = connections_to(port);
        let _client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _server = listener.accept().unwrap();
        assert_eq!(connections_to(port), before + 1);
    }
}
