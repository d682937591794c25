//! Job ids: `JobId::parse` takes ids from callers (dependencies, lookups, flow nodes) and
//! `unix_ms` reads the timestamp out of ids a store hands back, which may be any text. A
//! parsed id is the canonical lower-case hyphenated UUID and parses to itself; an id minted at
//! a time carries that time.
//!
//! Input: `id text \n a Unix ms time`.

use flexiq_core::JobId;

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let text = f.text();
    let at = f.i64();

    match JobId::parse(&text) {
        Ok(id) => {
            let s = id.as_str();
            assert_eq!(s.len(), 36, "{text:?} became {s:?}");
            assert!(
                s.bytes().all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{s:?}"
            );
            assert_eq!(JobId::parse(s).ok().as_ref(), Some(&id), "{s:?} does not re-parse to itself");
            assert_eq!(JobId::from_trusted(s).unix_ms(), id.unix_ms());
        }
        Err(e) => assert_eq!(e.code(), "INVALID_ARGUMENT", "{text:?}: {e}"),
    }
    let _ = JobId::from_trusted(text.clone()).unix_ms();

    let minted = JobId::at(at);
    assert_eq!(minted.unix_ms(), Some(at.clamp(0, (1 << 48) - 1)), "minted at {at}");
    assert_eq!(JobId::parse(minted.as_str()).ok(), Some(minted));
}
