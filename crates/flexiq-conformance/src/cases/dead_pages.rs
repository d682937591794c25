//! Keyset pages over the dead-letter queue.

use flexiq_core::store::{DeadLettersAfterRequest, DeadLettersRequest};
use flexiq_core::ErrorKind;

use crate::fixtures::{assert_kind, at, kill, open, tamper};
use crate::Harness;

/// Walking keyset pages visits every entry once, newest first by failure time.
pub async fn dead_pages_walk_every_entry_once(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut expected = Vec::new();
    for i in 0..11 {
        expected.push(kill(&*s, "t", "e", at(i * 10)).await.to_string());
    }
    expected.reverse();
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let p =
            s.dead_letters_after(DeadLettersAfterRequest { limit: 3, after: after.clone() }).await.unwrap();
        assert!(p.items.len() <= 3);
        seen.extend(p.items.into_iter().map(|d| d.original_job_id));
        match p.next_cursor {
            Some(c) => after = Some(c),
            None => break,
        }
    }
    assert_eq!(seen, expected);
}

/// Entries dying mid-walk do not disturb the walk.
pub async fn dead_pages_stable_under_new_entries(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut expected = Vec::new();
    for i in 0..6 {
        expected.push(kill(&*s, "t", "e", at(i * 10)).await.to_string());
    }
    expected.reverse();
    let p1 = s.dead_letters_after(DeadLettersAfterRequest { limit: 2, after: None }).await.unwrap();
    kill(&*s, "t", "late", at(1_000)).await;
    let mut seen: Vec<_> = p1.items.into_iter().map(|d| d.original_job_id).collect();
    let mut after = p1.next_cursor;
    while let Some(c) = after {
        let p =
            s.dead_letters_after(DeadLettersAfterRequest { limit: 2, after: Some(c.clone()) }).await.unwrap();
        seen.extend(p.items.into_iter().map(|d| d.original_job_id));
        after = p.next_cursor;
    }
    assert_eq!(seen, expected);
}

/// Garbage and tampered dead-letter cursors are `InvalidArgument`.
pub async fn dead_pages_bad_cursor_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    for i in 0..3 {
        kill(&*s, "t", "e", at(i)).await;
    }
    assert_kind(
        s.dead_letters_after(DeadLettersAfterRequest { limit: 1, after: Some("garbage".into()) }).await,
        ErrorKind::InvalidArgument,
    );
    let c = s
        .dead_letters_after(DeadLettersAfterRequest { limit: 1, after: None })
        .await
        .unwrap()
        .next_cursor
        .expect("more pages");
    assert_kind(
        s.dead_letters_after(DeadLettersAfterRequest { limit: 1, after: Some(tamper(&c)) }).await,
        ErrorKind::InvalidArgument,
    );
}

/// A page size of 0 is `InvalidArgument` for both dead-letter listings.
pub async fn dead_pages_zero_limit_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(
        s.dead_letters_after(DeadLettersAfterRequest { limit: 0, after: None }).await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.dead_letters(DeadLettersRequest { task: None, limit: 0, offset: 0 }).await,
        ErrorKind::InvalidArgument,
    );
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_dead_pages {
    ($callback:path, $make:path) => {
        $callback!($make;
            dead_pages::dead_pages_walk_every_entry_once,
            dead_pages::dead_pages_stable_under_new_entries,
            dead_pages::dead_pages_bad_cursor_is_invalid,
            dead_pages::dead_pages_zero_limit_is_invalid,
        );
    };
}
