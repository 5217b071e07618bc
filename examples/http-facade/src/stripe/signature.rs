//! Stripe webhook signatures: the `Stripe-Signature` header is
//! `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`, where each `v1` is the
//! HMAC-SHA256 of `"{t}.{body}"` keyed with the endpoint's signing secret.
//! A request is genuine when one `v1` matches and `t` is within the
//! tolerance of now (so a captured request cannot be replayed later).

use sha2::{Digest, Sha256};

/// The header Stripe signs its webhook requests in.
pub const HEADER: &str = "Stripe-Signature";

/// How far the signed time may be from now.
pub const TOLERANCE_SECONDS: i64 = 300;

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The header value signing `body` at time `t` (what Stripe sends).
pub fn sign(secret: &str, t: i64, body: &[u8]) -> String {
    let mut message = format!("{t}.").into_bytes();
    message.extend_from_slice(body);
    format!(
        "t={t},v1={}",
        hex(&hmac_sha256(secret.as_bytes(), &message))
    )
}

/// Checks a `Stripe-Signature` header against `body` at time `now`; the
/// error says what is wrong (never the expected signature).
pub fn verify(header: &str, body: &[u8], secret: &str, now: i64) -> Result<(), String> {
    let mut time = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", value)) => time = value.parse::<i64>().ok(),
            Some(("v1", value)) => signatures.push(value.to_ascii_lowercase()),
            _ => {}
        }
    }
    let t = time.ok_or("the Stripe-Signature header has no valid `t=` timestamp")?;
    if signatures.is_empty() {
        return Err("the Stripe-Signature header has no `v1=` signature".to_string());
    }
    if (now - t).abs() > TOLERANCE_SECONDS {
        return Err(format!(
            "the signature's timestamp is {}s from now, over the tolerance of {TOLERANCE_SECONDS}s",
            (now - t).abs()
        ));
    }
    let expected = sign(secret, t, body);
    let expected = expected.rsplit_once("v1=").map_or("", |(_, hex)| hex);
    let matches = signatures.iter().any(|given| {
        given.len() == expected.len()
            && given
                .bytes()
                .zip(expected.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    });
    if matches {
        Ok(())
    } else {
        Err("no signature in the Stripe-Signature header matches the body".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_test_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_signature_is_checked_against_body_secret_and_time() {
        let body = br#"{"id":"evt_1"}"#;
        let header = sign("whsec_test", 1_700_000_000, body);
        assert_eq!(verify(&header, body, "whsec_test", 1_700_000_100), Ok(()));
        assert!(verify(&header, b"{}", "whsec_test", 1_700_000_100).is_err());
        assert!(verify(&header, body, "whsec_other", 1_700_000_100).is_err());
        let late = verify(&header, body, "whsec_test", 1_700_001_000).unwrap_err();
        assert!(late.contains("over the tolerance"), "{late}");
        assert!(verify("v1=00", body, "whsec_test", 1_700_000_000).is_err());
        let two = format!("{header},v1=deadbeef");
        assert_eq!(verify(&two, body, "whsec_test", 1_700_000_000), Ok(()));
    }
}
