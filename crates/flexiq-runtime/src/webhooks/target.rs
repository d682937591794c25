//! Where a delivery may go: the hook's host resolved, and refused when any address it resolves
//! to is loopback, private, link-local or otherwise not on the public internet.
//!
//! A webhook URL is operator input that makes the worker send requests from inside the
//! network, so a hook pointed at `localhost`, a metadata service or a private range would turn
//! it into a probe of that network (server-side request forgery). The check is on the resolved
//! addresses, not the host name, and the request then connects to exactly the addresses that
//! were checked (and follows no redirects), so a name that resolves differently a moment later
//! cannot slip past it. `allow_private` on a hook turns the check off for that hook.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use flexiq_core::ErrorKind;

use crate::error::{Error, Result};

/// The checked target of one delivery.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The URL's host, as the request names it.
    pub(crate) host: String,
    /// The addresses it resolved to, every one allowed.
    pub(crate) addrs: Vec<SocketAddr>,
}

/// Resolves `url`'s host for hook `hook`; with `allow_private` false, refuses it when any
/// address is not public (`InvalidArgument` naming the hook, host and address).
pub(crate) async fn resolve(hook: &str, url: &reqwest::Url, allow_private: bool) -> Result<Target> {
    let host = url
        .host_str()
        .ok_or_else(|| Error::invalid(format!("webhook {hook}: url {url} has no host")))?
        .to_string();
    let port = url
        .port_or_known_default()
        .ok_or_else(|| Error::invalid(format!("webhook {hook}: url {url} has no port")))?;
    // `host_str` keeps an IPv6 literal's brackets, which the resolver does not take.
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
        .await
        .map_err(|e| {
            Error::Core(flexiq_core::Error::backend_retryable(format!(
                "webhook {hook}: cannot resolve {host}: {e}"
            )))
        })?
        .collect();
    if addrs.is_empty() {
        return Err(Error::Core(flexiq_core::Error::backend_retryable(format!(
            "webhook {hook}: {host} resolved to no address"
        ))));
    }
    if !allow_private {
        if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
            return Err(Error::invalid(format!(
                "webhook {hook}: target {host} resolves to {}, a loopback or private address; \
                 set allow_private on the hook to deliver there",
                bad.ip()
            )));
        }
    }
    Ok(Target { host, addrs })
}

/// The check of a hook's target when the hook is written (the dashboard's forms and API), so an
/// operator who points hook `hook` at a loopback or private address without `allow_private`
/// hears so at once rather than from a failed delivery: refuses (`InvalidArgument` naming the
/// hook, host and address) a URL without a host or port, or whose host resolves to a non-public
/// address. A host that does not resolve within `wait`, or not at all, passes: the delivery
/// resolves it again before every attempt and stays the authority.
pub async fn check_target(hook: &str, url: &str, allow_private: bool, wait: Duration) -> Result<()> {
    if allow_private {
        return Ok(());
    }
    let url =
        reqwest::Url::parse(url).map_err(|e| Error::invalid(format!("webhook {hook}: url {url}: {e}")))?;
    match tokio::time::timeout(wait, resolve(hook, &url, false)).await {
        Ok(Err(e)) if e.kind() == Some(ErrorKind::InvalidArgument) => Err(e),
        _ => Ok(()),
    }
}

/// Whether `ip` is a public unicast address.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // Shared address space (carrier-grade NAT), 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, 192.0.0.0/24.
        || (a == 192 && b == 0 && c == 0)
        // Benchmarking, 198.18.0.0/15.
        || (a == 198 && (b == 18 || b == 19))
        // Reserved, 240.0.0.0/4.
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        // Unique local, fc00::/7.
        || (s[0] & 0xfe00) == 0xfc00
        // Link-local, fe80::/10.
        || (s[0] & 0xffc0) == 0xfe80
        // Documentation, 2001:db8::/32.
        || (s[0] == 0x2001 && s[1] == 0x0db8)
        // NAT64 of any IPv4 address, 64:ff9b::/96: judged by the address it embeds.
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] && {
            let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
            !is_public_v4(v4)
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_and_reserved_ranges_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip} must not count as public");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"] {
            assert!(is_public(ip.parse().unwrap()), "{ip} is public");
        }
    }

    #[tokio::test]
    async fn a_loopback_target_is_refused_unless_allowed() {
        let url = reqwest::Url::parse("http://localhost:9/hook").unwrap();
        let e = resolve("local", &url, false).await.unwrap_err().to_string();
        assert!(e.contains("webhook local") && e.contains("allow_private"), "{e}");
        let ok = resolve("local", &url, true).await.unwrap();
        assert!(ok.addrs.iter().all(|a| a.ip().is_loopback() && a.port() == 9));
        let literal = reqwest::Url::parse("http://[::1]:9/").unwrap();
        assert!(resolve("v6", &literal, false).await.is_err());
    }

    #[tokio::test]
    async fn a_written_hook_is_checked_for_a_private_target() {
        let wait = Duration::from_secs(2);
        let e = check_target("orders", "http://127.0.0.1:9/in", false, wait).await.unwrap_err();
        assert_eq!(e.kind(), Some(ErrorKind::InvalidArgument));
        assert!(e.to_string().contains("webhook orders") && e.to_string().contains("allow_private"), "{e}");
        let e = check_target("orders", "https://[::1]/in", false, wait).await.unwrap_err();
        assert!(e.to_string().contains("::1"), "{e}");
        let e = check_target("orders", "not a url", false, wait).await.unwrap_err();
        assert_eq!(e.kind(), Some(ErrorKind::InvalidArgument));
        check_target("orders", "http://127.0.0.1:9/in", true, wait).await.unwrap();
        check_target("orders", "https://93.184.216.34/in", false, wait).await.unwrap();
        check_target("orders", "https://no-such-host.invalid/in", false, wait).await.unwrap();
    }
}
