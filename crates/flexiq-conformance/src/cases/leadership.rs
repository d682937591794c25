//! Leader leases: one holder per name until expiry, renewable by the holder.

use flexiq_core::store::ReleaseLeaseRequest;

use crate::fixtures::{acquire, at, current_lease, now, open};
use crate::Harness;

/// A free lease is taken, and `lease()` names the holder and expiry.
pub async fn leadership_acquire_free_lease(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(current_lease(&*s, "cleaner", now()).await.is_none());
    assert!(acquire(&*s, "cleaner", "a", 10_000, now()).await);
    let l = current_lease(&*s, "cleaner", at(1)).await.expect("held");
    assert_eq!((l.name.as_str(), l.holder.as_str(), l.expires_at), ("cleaner", "a", at(10_000)));
}

/// Others are refused while the lease is held.
pub async fn leadership_others_refused_until_expiry(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(acquire(&*s, "cleaner", "a", 10_000, now()).await);
    assert!(!acquire(&*s, "cleaner", "b", 10_000, at(9_999)).await);
    assert_eq!(current_lease(&*s, "cleaner", at(9_999)).await.unwrap().holder, "a");
}

/// A lapsed lease can be taken by someone else.
pub async fn leadership_lapsed_lease_taken_over(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(acquire(&*s, "cleaner", "a", 10_000, now()).await);
    assert!(current_lease(&*s, "cleaner", at(10_001)).await.is_none());
    assert!(acquire(&*s, "cleaner", "b", 10_000, at(10_001)).await);
    let l = current_lease(&*s, "cleaner", at(10_002)).await.unwrap();
    assert_eq!((l.holder.as_str(), l.expires_at), ("b", at(20_001)));
    assert!(!acquire(&*s, "cleaner", "a", 10_000, at(10_003)).await);
}

/// The holder renews by acquiring again, pushing the expiry out.
pub async fn leadership_holder_renews(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(acquire(&*s, "cleaner", "a", 10_000, now()).await);
    assert!(acquire(&*s, "cleaner", "a", 10_000, at(8_000)).await);
    assert_eq!(current_lease(&*s, "cleaner", at(12_000)).await.unwrap().expires_at, at(18_000));
    assert!(!acquire(&*s, "cleaner", "b", 10_000, at(12_000)).await);
}

/// Release by the holder frees the lease; release by anyone else is false.
pub async fn leadership_release(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(acquire(&*s, "cleaner", "a", 10_000, now()).await);
    assert!(!s
        .release_lease(ReleaseLeaseRequest { name: "cleaner".into(), holder: "b".into() })
        .await
        .unwrap());
    assert_eq!(current_lease(&*s, "cleaner", at(1)).await.unwrap().holder, "a");
    assert!(s
        .release_lease(ReleaseLeaseRequest { name: "cleaner".into(), holder: "a".into() })
        .await
        .unwrap());
    assert!(current_lease(&*s, "cleaner", at(1)).await.is_none());
    assert!(!s
        .release_lease(ReleaseLeaseRequest { name: "cleaner".into(), holder: "a".into() })
        .await
        .unwrap());
    assert!(acquire(&*s, "cleaner", "b", 10_000, at(2)).await);
}

/// Leases of different names are independent.
pub async fn leadership_names_are_independent(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(acquire(&*s, "cleaner", "a", 10_000, now()).await);
    assert!(acquire(&*s, "scheduler", "b", 10_000, now()).await);
    assert_eq!(current_lease(&*s, "scheduler", at(1)).await.unwrap().holder, "b");
}

/// Racing candidates for a free lease: exactly one wins.
pub async fn leadership_race_has_one_winner(h: &dyn Harness) {
    let s = open(h, "default").await;
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move { acquire(&*s, "cleaner", &format!("c{i}"), 10_000, now()).await })
        })
        .collect();
    let mut wins = 0;
    for t in tasks {
        wins += usize::from(t.await.unwrap());
    }
    assert_eq!(wins, 1);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_leadership {
    ($callback:path, $make:path) => {
        $callback!($make;
            leadership::leadership_acquire_free_lease,
            leadership::leadership_others_refused_until_expiry,
            leadership::leadership_lapsed_lease_taken_over,
            leadership::leadership_holder_renews,
            leadership::leadership_release,
            leadership::leadership_names_are_independent,
            leadership::leadership_race_has_one_winner,
        );
    };
}
