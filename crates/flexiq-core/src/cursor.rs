//! Keyset cursors and pages.
//!
//! A cursor carries the (sort key, id) of the last row of a page, the listing it came from and a
//! fingerprint of that listing's filter, with a checksum, as base64url text. Decoding checks all
//! of it, so a cursor from another listing, a tampered one or garbage is `InvalidArgument`,
//! never a wrong page. Callers treat it as opaque.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

const VERSION: &str = "c1";

/// One page of a keyset listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    /// The rows.
    pub items: Vec<T>,
    /// Pass back as `after` for the next page; `None` when this was the last.
    pub next_cursor: Option<String>,
}

/// The position a cursor encodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The listing it belongs to (`"jobs"`, `"dead_letters"`, `"archived"`, ...).
    pub listing: String,
    /// Fingerprint of the listing's filter.
    pub filter_fp: u64,
    /// Sort key of the last row returned (a Unix ms timestamp in every listing).
    pub sort_key: i64,
    /// Id of the last row returned.
    pub id: String,
}

impl Cursor {
    /// Encodes to opaque text.
    pub fn encode(&self) -> String {
        let body = format!("{VERSION}|{}|{:x}|{}|{}", self.listing, self.filter_fp, self.sort_key, self.id);
        let sum = fingerprint(&[&body]);
        URL_SAFE_NO_PAD.encode(format!("{body}|{sum:x}"))
    }

    /// Decodes `text`, requiring it to belong to `listing` with filter fingerprint `filter_fp`.
    pub fn decode(text: &str, listing: &str, filter_fp: u64) -> Result<Self> {
        let garbage = || Error::invalid(format!("cursor {} is not a valid {listing} cursor", shorten(text)));
        let raw = URL_SAFE_NO_PAD.decode(text.trim()).map_err(|_| garbage())?;
        let raw = String::from_utf8(raw).map_err(|_| garbage())?;
        let (body, sum) = raw.rsplit_once('|').ok_or_else(garbage)?;
        if u64::from_str_radix(sum, 16).ok() != Some(fingerprint(&[body])) {
            return Err(garbage());
        }
        let mut parts = body.splitn(5, '|');
        let (Some(ver), Some(l), Some(fp), Some(key), Some(id)) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(garbage());
        };
        if ver != VERSION {
            return Err(Error::invalid(format!("cursor version {ver:?} is not supported")));
        }
        if l != listing {
            return Err(Error::invalid(format!("cursor belongs to the {l} listing, not {listing}")));
        }
        if u64::from_str_radix(fp, 16).ok() != Some(filter_fp) {
            return Err(Error::invalid(format!("cursor was made for a different {listing} filter")));
        }
        let sort_key = key.parse().map_err(|_| garbage())?;
        Ok(Cursor { listing: l.to_string(), filter_fp, sort_key, id: id.to_string() })
    }
}

fn shorten(s: &str) -> String {
    let mut out: String = s.chars().take(24).collect();
    if s.chars().count() > 24 {
        out.push('…');
    }
    format!("{out:?}")
}

/// A stable 64-bit FNV-1a fingerprint of some strings (filters, checksums).
pub fn fingerprint(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Builds a page from up to `limit + 1` rows fetched in order: the extra row only says
/// that another page exists, and the cursor is made from the last row kept.
pub fn page_from_rows<T>(
    mut rows: Vec<T>,
    limit: usize,
    listing: &str,
    filter_fp: u64,
    key_of: impl Fn(&T) -> (i64, String),
) -> Page<T> {
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next_cursor = match (more, rows.last()) {
        (true, Some(last)) => {
            let (sort_key, id) = key_of(last);
            Some(Cursor { listing: listing.to_string(), filter_fp, sort_key, id }.encode())
        }
        _ => None,
    };
    Page { items: rows, next_cursor }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn refuses_other_listings_filters_and_garbage() {
        let c = Cursor { listing: "jobs".into(), filter_fp: 7, sort_key: 42, id: "abc".into() }.encode();
        assert_eq!(Cursor::decode(&c, "jobs", 7).unwrap().sort_key, 42);
        assert!(Cursor::decode(&c, "dead_letters", 7).is_err());
        assert!(Cursor::decode(&c, "jobs", 8).is_err());
        for bad in ["", "garbage", "!!!", &c[..c.len() - 2]] {
            assert_eq!(Cursor::decode(bad, "jobs", 7).unwrap_err().code(), "INVALID_ARGUMENT");
        }
        let mut raw = URL_SAFE_NO_PAD.decode(&c).unwrap();
        raw[10] ^= 1;
        assert!(Cursor::decode(&URL_SAFE_NO_PAD.encode(raw), "jobs", 7).is_err());
    }

    #[test]
    fn pages_carry_a_cursor_only_when_more_rows_exist() {
        let p = page_from_rows(vec![1, 2, 3], 2, "jobs", 0, |r| (*r, r.to_string()));
        assert_eq!(p.items, vec![1, 2]);
        assert!(p.next_cursor.is_some());
        let p = page_from_rows(vec![1, 2], 2, "jobs", 0, |r| (*r, r.to_string()));
        assert!(p.next_cursor.is_none());
    }

    proptest! {
        #[test]
        fn round_trips(listing in "[a-z_]{1,12}", fp in any::<u64>(), key in any::<i64>(), id in "[a-zA-Z0-9|-]{0,40}") {
            let c = Cursor { listing: listing.clone(), filter_fp: fp, sort_key: key, id };
            prop_assert_eq!(Cursor::decode(&c.encode(), &listing, fp).unwrap(), c);
        }

        #[test]
        fn random_text_never_decodes(text in "[A-Za-z0-9_-]{0,80}") {
            prop_assert!(Cursor::decode(&text, "jobs", 0).is_err());
        }
    }
}
