//! Webhooks end to end: a worker's dispatcher and delivery jobs against a receiver on
//! loopback, plus the dispatcher's cursor and dedup driven round by round.

mod delivery;
mod dispatch;
mod receiver;
