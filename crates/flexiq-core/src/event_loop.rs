//! Threads that must never wait: a host language's event loop polling store futures itself.
//!
//! A store may do short synchronous work on the thread that polls its future when that saves
//! a hand-off to another thread (the SQLite store commits a small write on the caller's thread
//! when its write connection is free). On an event loop's thread that work is a stall of every
//! other callback, and SQLite's wait for another process's write lock would be a long one. The
//! thread that drives an event loop marks itself here, and stores send such work elsewhere.

use std::cell::Cell;

thread_local! {
    static EVENT_LOOP: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as an event loop's for the rest of its life.
pub fn mark_this_thread() {
    EVENT_LOOP.with(|c| c.set(true));
}

/// Whether the calling thread was marked by [`mark_this_thread`].
pub fn is_this_thread() -> bool {
    EVENT_LOOP.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_holds_for_its_thread_only() {
        assert!(!is_this_thread());
        std::thread::spawn(|| {
            mark_this_thread();
            assert!(is_this_thread());
        })
        .join()
        .unwrap();
        assert!(!is_this_thread());
    }
}
