//! Enumeration names and storage codes: statuses, dependency policies, dedup modes and
//! retention tables are parsed from caller text (SDK options, CLI flags) and read back from
//! integer codes stores keep. Every name or code accepted maps back to itself, and a refusal is
//! `InvalidArgument` for caller text and `Backend` for a stored code.
//!
//! Input: `name \n code`.

use flexiq_core::flow::EdgePolicy;
use flexiq_core::{DedupMode, JobStatus, RetentionTable};

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let name = f.text();
    let code = f.u64() as u8;

    match name.parse::<JobStatus>() {
        Ok(s) => assert_eq!(s.as_str(), name),
        Err(e) => assert_eq!(e.code(), "INVALID_ARGUMENT"),
    }
    match JobStatus::from_code(code) {
        Ok(s) => assert_eq!(s.code(), code),
        Err(e) => assert_eq!(e.code(), "BACKEND"),
    }
    match EdgePolicy::parse(&name) {
        Ok(p) => {
            assert!(EdgePolicy::FLOW.contains(&p), "{name:?} parsed to {p}, not a flow policy");
            assert_eq!(EdgePolicy::parse(p.as_str()).ok(), Some(p));
        }
        Err(e) => assert_eq!(e.code(), "INVALID_ARGUMENT"),
    }
    match EdgePolicy::from_code(code) {
        Ok(p) => assert_eq!(p.code(), code),
        Err(e) => assert_eq!(e.code(), "BACKEND"),
    }
    match DedupMode::parse(&name) {
        Ok(m) => assert_eq!(DedupMode::parse(m.as_str()).ok(), Some(m)),
        Err(e) => assert_eq!(e.code(), "INVALID_ARGUMENT"),
    }
    match RetentionTable::parse(&name) {
        Ok(t) => assert!(t.key() == name || t.camel_key() == name),
        Err(e) => assert_eq!(e.code(), "INVALID_ARGUMENT"),
    }
}
