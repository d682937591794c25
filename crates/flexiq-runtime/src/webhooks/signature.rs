//! Signing and verifying deliveries: `flexiq-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`.
//!
//! Each `v1` is the lowercase hex HMAC-SHA256 of `"<t>.<body>"` under one of the hook's
//! secrets. A hook being rotated has two secrets and every delivery carries both signatures,
//! so a receiver that still knows only the old secret and one that already knows only the new
//! one both accept it; the old secret is dropped once every receiver has the new one. The
//! timestamp is signed too, so a receiver that refuses old timestamps refuses replays. The
//! Python and Node SDKs ship the same verifier (`flexiq.webhooks.verify_signature`,
//! `verifySignature`).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::error::{Error, Result};

/// The header carrying the signature.
pub const SIGNATURE_HEADER: &str = "flexiq-signature";

/// The default tolerance of [`verify`] between the signed timestamp and now (300 s).
pub const DEFAULT_TOLERANCE_SECS: u64 = 300;

type HmacSha256 = Hmac<Sha256>;

fn mac(secret: &str, timestamp: i64, body: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length, so this cannot fail.
    let mut m =
        <HmacSha256 as KeyInit>::new_from_slice(secret.as_bytes()).expect("hmac accepts any key length");
    m.update(timestamp.to_string().as_bytes());
    m.update(b".");
    m.update(body);
    m
}

/// The `flexiq-signature` header value for `body` sent at `timestamp` (Unix seconds), with
/// one `v1` per secret, in the order given.
pub fn sign(secrets: &[String], timestamp: i64, body: &[u8]) -> String {
    let mut out = format!("t={timestamp}");
    for s in secrets {
        out.push_str(",v1=");
        out.push_str(&hex::encode(mac(s, timestamp, body).finalize().into_bytes()));
    }
    out
}

/// Checks a `flexiq-signature` header against `body`: some `v1` must be the signature under
/// some secret in `secrets` (compared in constant time), and the signed timestamp within
/// `tolerance_secs` of `now_secs` (Unix seconds). `InvalidArgument` says which check failed.
pub fn verify(
    header: &str,
    body: &[u8],
    secrets: &[String],
    tolerance_secs: u64,
    now_secs: i64,
) -> Result<()> {
    let mut timestamp = None;
    let mut sigs = Vec::new();
    for part in header.split(',') {
        let (k, v) = part
            .trim()
            .split_once('=')
            .ok_or_else(|| Error::invalid(format!("signature header part {part:?} is not key=value")))?;
        match k {
            "t" => {
                let t = v
                    .parse::<i64>()
                    .map_err(|_| Error::invalid(format!("signature timestamp {v:?} is not a number")))?;
                timestamp = Some(t);
            }
            "v1" => {
                sigs.push(hex::decode(v).map_err(|_| Error::invalid(format!("signature {v:?} is not hex")))?)
            }
            _ => {}
        }
    }
    let t = timestamp.ok_or_else(|| Error::invalid("signature header has no timestamp t="))?;
    if sigs.is_empty() {
        return Err(Error::invalid("signature header has no v1= signature"));
    }
    if now_secs.abs_diff(t) > tolerance_secs {
        return Err(Error::invalid(format!(
            "signature timestamp {t} is more than {tolerance_secs} s from now ({now_secs})"
        )));
    }
    let ok = secrets.iter().any(|s| sigs.iter().any(|sig| mac(s, t, body).verify_slice(sig).is_ok()));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid("no signature matches any of the secrets"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    /// The vector the Python and Node SDK tests check their verifiers against: secrets
    /// `old-secret` and `new-secret`, timestamp 1700000000.
    const VECTOR_BODY: &str = r#"{"hook":"orders","event":{"id":"42","name":"completed"}}"#;
    const VECTOR_HEADER: &str = "t=1700000000,v1=3113ed6bf24849df546b6c1ec7093607e7a8fff64df020e4203134875819bed1,v1=a3fb9b8c1f60182307ef3388c405eb6aebd8967f5d3c0bd1afd8eec32dae2a3b";

    #[test]
    fn the_shared_vector_is_what_the_signer_produces() {
        let header = sign(&secrets(&["old-secret", "new-secret"]), 1_700_000_000, VECTOR_BODY.as_bytes());
        assert_eq!(header, VECTOR_HEADER);
    }

    #[test]
    fn signs_once_per_secret_and_verifies_with_either() {
        let both = secrets(&["old-secret", "new-secret"]);
        let header = sign(&both, 1_700_000_000, VECTOR_BODY.as_bytes());
        assert_eq!(header.matches("v1=").count(), 2);
        for one in ["old-secret", "new-secret"] {
            verify(&header, VECTOR_BODY.as_bytes(), &secrets(&[one]), 300, 1_700_000_100).unwrap();
        }
        let e =
            verify(&header, VECTOR_BODY.as_bytes(), &secrets(&["other"]), 300, 1_700_000_000).unwrap_err();
        assert!(e.to_string().contains("no signature matches"), "{e}");
        let e = verify(&header, b"tampered", &both, 300, 1_700_000_000).unwrap_err();
        assert!(e.to_string().contains("no signature matches"), "{e}");
        let e = verify(&header, VECTOR_BODY.as_bytes(), &both, 300, 1_700_000_301).unwrap_err();
        assert!(e.to_string().contains("more than 300 s"), "{e}");
    }

    #[test]
    fn malformed_headers_are_refused_with_the_reason() {
        let s = secrets(&["k"]);
        let bad = |h: &str| verify(h, b"", &s, 300, 0).unwrap_err().to_string();
        assert!(bad("v1=00").contains("no timestamp"));
        assert!(bad("t=0").contains("no v1"));
        assert!(bad("t=x,v1=00").contains("not a number"));
        assert!(bad("t=0,v1=zz").contains("not hex"));
        assert!(bad("garbage").contains("key=value"));
    }
}
