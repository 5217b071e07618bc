//! Delivery targets: http or https URLs whose host is a public address.
//!
//! A key holder must not make the service probe its own network, so a
//! target on a loopback, private, link-local, shared (CGNAT), multicast or
//! unspecified address is refused unless the service runs with
//! `--webhooks-allow-private`. The rule is checked when a target is set and
//! again before every delivery, on every address the host resolves to then
//! (a name that later resolves to a private address is caught there);
//! redirects are never followed.

use crate::error::ApiError;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// A refusal naming the field the target came in.
fn refused(field: &str, why: String) -> ApiError {
    ApiError::bad_field(field, format!("field `{field}`: {why}"))
}

/// Checks a target URL given in `field`; resolves its host unless private
/// addresses are allowed. Returns the URL as parsed.
pub fn check(text: &str, allow_private: bool, field: &str) -> Result<url::Url, ApiError> {
    let not_url = || refused(field, format!("`{text}` is not an http or https URL"));
    let url = url::Url::parse(text.trim()).map_err(|_| not_url())?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(not_url());
    }
    let Some(host) = url.host() else {
        return Err(not_url());
    };
    if allow_private {
        return Ok(url);
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let addresses: Vec<SocketAddr> = match host {
        url::Host::Ipv4(ip) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
        url::Host::Ipv6(ip) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
        url::Host::Domain(name) => (name, port)
            .to_socket_addrs()
            .map_err(|_| refused(field, format!("host `{name}` does not resolve")))?
            .collect(),
    };
    if addresses.is_empty() {
        return Err(refused(field, format!("host `{host}` does not resolve")));
    }
    if let Some(private) = addresses.iter().find(|a| !is_public(a.ip())) {
        return Err(refused(
            field,
            format!(
                "`{}` is a loopback or private-network address; targets must be public (start the server with --webhooks-allow-private to allow them)",
                private.ip()
            ),
        ));
    }
    Ok(url)
}

/// [`check`] of a target as it is set (a webhook's `url`, a chat
/// webhook): refused too are a fragment (`#...`), since no request ever
/// carries it to the target, and a character a request line cannot carry
/// (a space, say), since the target is sent as it is written. Deliveries
/// check stored targets with [`check`] alone.
pub fn check_given(text: &str, allow_private: bool, field: &str) -> Result<url::Url, ApiError> {
    let url = check(text, allow_private, field)?;
    if text.trim().parse::<ureq::http::Uri>().is_err() {
        return Err(refused(
            field,
            format!(
                "`{text}` holds a character a request cannot carry as it is (such as a space); percent-encode it"
            ),
        ));
    }
    if let Some(fragment) = url.fragment() {
        return Err(refused(
            field,
            format!("the fragment `#{fragment}` is never sent to the target; leave it out"),
        ));
    }
    Ok(url)
}

/// Whether an address is on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                // Shared address space (carrier-grade NAT), 100.64.0.0/10.
                || (a == 100 && (64..128).contains(&b))
                // Benchmarking, 198.18.0.0/15; reserved, 240.0.0.0/4.
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                // Unique local fc00::/7, link-local fe80::/10.
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_loopback_targets_are_refused() {
        for url in [
            "http://127.0.0.1:9000/hook",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            let refused = check(url, false, "url").expect_err(url).to_string();
            assert!(
                refused.starts_with("field `url`: `") && refused.contains("private-network"),
                "{refused}"
            );
            assert!(
                check(url, true, "url").is_ok(),
                "{url} with private allowed"
            );
        }
    }

    #[test]
    fn a_fragment_is_refused_when_a_target_is_set() {
        assert_eq!(
            check_given("https://8.8.8.8/hook#team", false, "url")
                .expect_err("a fragment")
                .to_string(),
            "field `url`: the fragment `#team` is never sent to the target; leave it out"
        );
        assert!(check_given("https://8.8.8.8/hook?team=a", false, "url").is_ok());
        // A target stored before is still delivered to.
        assert!(check("https://8.8.8.8/hook#team", false, "url").is_ok());
    }

    #[test]
    fn public_addresses_pass_and_other_schemes_do_not() {
        assert!(check("https://8.8.8.8/hook", false, "url").is_ok());
        assert!(check("http://[2001:4860::8888]/", false, "url").is_ok());
        for url in ["ftp://8.8.8.8/", "not a url", "file:///etc/passwd"] {
            assert_eq!(
                check(url, true, "url").expect_err(url).to_string(),
                format!("field `url`: `{url}` is not an http or https URL")
            );
        }
    }
}
