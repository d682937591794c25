//! Event ids: the position of an event in its namespace's stream, `<xid>-<id>`.
//!
//! The stream is ordered by the id of the transaction that wrote an event, then by the row's
//! own sequence number (see `events.rs` for why the transaction comes first). Both parts are
//! written zero-padded to a fixed width, so ids also sort as strings in stream order; any
//! decimal digits are read back.

use flexiq_core::{Error, Result};

/// Digits of a transaction id (`xid8`, an unsigned 64-bit number).
const XID_DIGITS: usize = 20;
/// Digits of a row's sequence number (a positive `bigint`).
const SEQ_DIGITS: usize = 19;

/// A position in a namespace's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct EventId {
    /// The writing transaction's id.
    pub(crate) xid: u64,
    /// The row's sequence number.
    pub(crate) seq: i64,
}

impl EventId {
    /// Before every event.
    pub(crate) const START: EventId = EventId { xid: 0, seq: 0 };

    /// Reads an id this store handed out; anything else is `InvalidArgument` naming it.
    pub(crate) fn parse(text: &str) -> Result<EventId> {
        let bad = || Error::invalid(format!("event id {text:?} is not a postgres event id (<xid>-<seq>)"));
        let (xid, seq) = text.split_once('-').ok_or_else(bad)?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(xid) || !digits(seq) {
            return Err(bad());
        }
        let xid = xid.parse::<u64>().map_err(|_| bad())?;
        let seq = seq.parse::<i64>().map_err(|_| bad())?;
        Ok(EventId { xid, seq })
    }

    /// From the columns as a query returns them (`xid::text`, `id`).
    pub(crate) fn of_row(xid: &str, seq: i64) -> Result<EventId> {
        let xid = xid
            .parse::<u64>()
            .map_err(|_| crate::error::corrupt(format!("transaction id {xid:?} of event {seq}")))?;
        Ok(EventId { xid, seq })
    }

    /// The transaction id as the text a query casts to `xid8`.
    pub(crate) fn xid_text(&self) -> String {
        self.xid.to_string()
    }
}

impl std::fmt::Display for EventId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:0xw$}-{:0sw$}", self.xid, self.seq, xw = XID_DIGITS, sw = SEQ_DIGITS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_sort_as_strings() {
        let ids = [
            EventId { xid: 3, seq: 1 },
            EventId { xid: 3, seq: 10 },
            EventId { xid: 40, seq: 2 },
            EventId { xid: u64::MAX, seq: i64::MAX },
        ];
        for w in ids.windows(2) {
            assert!(w[0] < w[1] && w[0].to_string() < w[1].to_string(), "{:?}", w);
        }
        for id in ids {
            let text = id.to_string();
            assert!(text.len() <= flexiq_core::events::MAX_EVENT_ID_BYTES, "{text}");
            assert_eq!(EventId::parse(&text).unwrap(), id);
        }
        assert_eq!(EventId::parse("7-9").unwrap(), EventId { xid: 7, seq: 9 });
    }

    #[test]
    fn anything_else_is_refused_by_name() {
        for bad in [
            "",
            "-",
            "1-",
            "-1",
            "1-2-3",
            "a-1",
            "1-b",
            "+1-2",
            "1- 2",
            "99999999999999999999999-1",
            "1-9223372036854775808",
        ] {
            let e = EventId::parse(bad).unwrap_err();
            assert_eq!(e.kind(), flexiq_core::ErrorKind::InvalidArgument, "{bad:?}");
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
    }
}
