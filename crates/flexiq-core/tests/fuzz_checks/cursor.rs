//! Keyset cursors: `Cursor::decode` takes text straight from callers, so it must refuse
//! anything that is not a cursor of the listing and filter asked for, without panicking, and a
//! cursor it accepts must say exactly what was asked for and survive a re-encode.
//!
//! Input: `text \n listing \n filter fingerprint`. The checksum stops random text early, so the
//! text is also sealed with a correct checksum and decoded again, to reach the field parsing.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use flexiq_core::cursor::fingerprint;
use flexiq_core::Cursor;

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let text = f.text();
    let listing = f.text();
    let fp = f.u64();

    decodes_soundly(&text, &listing, fp);
    // The text as a whole body, and as the sort key and id after a matching head, each under a
    // valid checksum.
    decodes_soundly(&sealed(&text), &listing, fp);
    decodes_soundly(&sealed(&format!("c1|{listing}|{fp:x}|{text}")), &listing, fp);

    // Encoding then decoding is the identity for every listing name a store uses (no `|`) and
    // any id, sort key and fingerprint.
    if !listing.contains('|') {
        let c = Cursor { listing: listing.clone(), filter_fp: fp, sort_key: fp as i64, id: text };
        let back = Cursor::decode(&c.encode(), &listing, fp);
        assert_eq!(back.as_ref().ok(), Some(&c), "{c:?} did not round-trip: {back:?}");
    }
}

/// `body` with its checksum, encoded as a cursor is.
fn sealed(body: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{body}|{:x}", fingerprint(&[body])))
}

fn decodes_soundly(text: &str, listing: &str, fp: u64) {
    match Cursor::decode(text, listing, fp) {
        Ok(c) => {
            assert_eq!((c.listing.as_str(), c.filter_fp), (listing, fp), "decoded {text:?} into {c:?}");
            let again = Cursor::decode(&c.encode(), listing, fp).expect("a decoded cursor re-encodes");
            assert_eq!(again, c);
        }
        Err(e) => assert_eq!(e.code(), "INVALID_ARGUMENT", "{text:?}: {e}"),
    }
}
