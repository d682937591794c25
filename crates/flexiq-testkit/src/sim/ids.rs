//! Job ids a seed can replay.
//!
//! Claims break ties by id, so ids minted from the system's randomness would let two runs of
//! one seed claim in different orders. These are UUIDv7 like every flexiq id: the injected
//! clock's millisecond first, then a per-seed sequence number (so ids of one millisecond sort
//! in the order they were made, as [`flexiq_core::JobId::at`] promises), then a salt in the
//! lowest bits that keeps two runs of one seed on one backing from colliding without changing
//! any order.

use flexiq_core::JobId;

/// Bits of the sequence number: 12 in `rand_a`, 8 at the top of `rand_b`.
const SEQ_BITS: u32 = 20;

/// Bits of `rand_b` left for the salt.
const SALT_BITS: u32 = 54;

/// Mints the ids of one seed's run.
#[derive(Debug, Clone)]
pub(crate) struct IdMinter {
    salt: u64,
    seq: u64,
}

impl IdMinter {
    pub(crate) fn new(salt: u64) -> Self {
        IdMinter { salt: salt & ((1 << SALT_BITS) - 1), seq: 0 }
    }

    /// The next id, stamped with `now_ms`.
    pub(crate) fn next(&mut self, now_ms: i64) -> JobId {
        assert!(self.seq < 1 << SEQ_BITS, "one seed minted more than {} job ids", 1u64 << SEQ_BITS);
        let ms = u128::from(u64::try_from(now_ms).unwrap_or(0) & ((1 << 48) - 1));
        let seq = u128::from(self.seq);
        self.seq += 1;
        let v = (ms << 80)
            | (0x7 << 76)
            | ((seq >> 8) << 64)
            | (0b10 << 62)
            | ((seq & 0xff) << SALT_BITS)
            | u128::from(self.salt);
        JobId::from_trusted(uuid::Uuid::from_u128(v).hyphenated().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_v7_and_sort_by_time_then_sequence_whatever_the_salt() {
        let mut a = IdMinter::new(u64::MAX);
        let mut b = IdMinter::new(1);
        let ids: Vec<JobId> = (0..600).map(|i| a.next(1_700_000_000_000 + i / 300)).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
        for id in &ids[..3] {
            assert_eq!(JobId::parse(id.as_str()).unwrap(), *id);
            assert_eq!(id.unix_ms(), Some(1_700_000_000_000));
        }
        let other: Vec<JobId> = (0..600).map(|i| b.next(1_700_000_000_000 + i / 300)).collect();
        assert!(ids.iter().zip(&other).all(|(x, y)| x != y), "two salts minted one id");
    }
}
