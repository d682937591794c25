//! Settings: the deployment-wide key/value store with compare-and-set.

use flexiq_core::store::{SetSettingIfRequest, SetSettingRequest};
use flexiq_core::ErrorKind;

use crate::fixtures::{assert_kind, open};
use crate::Harness;

/// A key never set reads as `None`.
pub async fn settings_get_unset_is_none(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_eq!(s.get_setting("theme").await.unwrap(), None);
}

/// Set inserts, and a second set overwrites.
pub async fn settings_set_and_overwrite(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_setting(SetSettingRequest { key: "theme".into(), value: "dark".into() }).await.unwrap();
    assert_eq!(s.get_setting("theme").await.unwrap().as_deref(), Some("dark"));
    s.set_setting(SetSettingRequest { key: "theme".into(), value: "light".into() }).await.unwrap();
    assert_eq!(s.get_setting("theme").await.unwrap().as_deref(), Some("light"));
}

/// Compare-and-set with `expected = None` writes only while the key is unset.
pub async fn settings_set_if_expected_none(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(s
        .set_setting_if(SetSettingIfRequest { key: "k".into(), expected: None, value: "first".into() })
        .await
        .unwrap());
    assert!(!s
        .set_setting_if(SetSettingIfRequest { key: "k".into(), expected: None, value: "second".into() })
        .await
        .unwrap());
    assert_eq!(s.get_setting("k").await.unwrap().as_deref(), Some("first"));
}

/// Compare-and-set with the current value writes.
pub async fn settings_set_if_matching_writes(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_setting(SetSettingRequest { key: "k".into(), value: "v1".into() }).await.unwrap();
    assert!(s
        .set_setting_if(SetSettingIfRequest {
            key: "k".into(),
            expected: Some("v1".into()),
            value: "v2".into()
        })
        .await
        .unwrap());
    assert_eq!(s.get_setting("k").await.unwrap().as_deref(), Some("v2"));
}

/// Compare-and-set with a stale value is false and writes nothing.
pub async fn settings_set_if_stale_is_false(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_setting(SetSettingRequest { key: "k".into(), value: "v1".into() }).await.unwrap();
    s.set_setting(SetSettingRequest { key: "k".into(), value: "v2".into() }).await.unwrap();
    assert!(!s
        .set_setting_if(SetSettingIfRequest {
            key: "k".into(),
            expected: Some("v1".into()),
            value: "v3".into()
        })
        .await
        .unwrap());
    assert_eq!(s.get_setting("k").await.unwrap().as_deref(), Some("v2"));
    assert!(!s
        .set_setting_if(SetSettingIfRequest {
            key: "missing".into(),
            expected: Some("v1".into()),
            value: "x".into()
        })
        .await
        .unwrap());
    assert_eq!(s.get_setting("missing").await.unwrap(), None);
}

/// Racing compare-and-set writers from the same value: exactly one wins.
pub async fn settings_set_if_race_has_one_winner(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_setting(SetSettingRequest { key: "counter".into(), value: "0".into() }).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                s.set_setting_if(SetSettingIfRequest {
                    key: "counter".into(),
                    expected: Some("0".into()),
                    value: format!("w{i}"),
                })
                .await
                .unwrap()
            })
        })
        .collect();
    let mut wins = 0;
    for t in tasks {
        wins += usize::from(t.await.unwrap());
    }
    assert_eq!(wins, 1);
}

/// Delete is true for an existing key and false after.
pub async fn settings_delete_true_then_false(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_setting(SetSettingRequest { key: "k".into(), value: "v".into() }).await.unwrap();
    assert!(s.delete_setting("k").await.unwrap());
    assert_eq!(s.get_setting("k").await.unwrap(), None);
    assert!(!s.delete_setting("k").await.unwrap());
    assert!(!s.delete_setting("never").await.unwrap());
}

/// `list_settings` returns every key, reserved prefixes included (no filtering).
pub async fn settings_list_everything(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.set_setting(SetSettingRequest { key: "b".into(), value: "2".into() }).await.unwrap();
    s.set_setting(SetSettingRequest { key: "a".into(), value: "1".into() }).await.unwrap();
    s.set_setting(SetSettingRequest { key: "retention:x".into(), value: "{}".into() }).await.unwrap();
    let all = s.list_settings().await.unwrap();
    assert_eq!(all.get("a").map(String::as_str), Some("1"));
    assert_eq!(all.get("b").map(String::as_str), Some("2"));
    assert_eq!(all.get("retention:x").map(String::as_str), Some("{}"));
    s.delete_setting("a").await.unwrap();
    assert!(!s.list_settings().await.unwrap().contains_key("a"));
}

/// Settings are deployment-wide: every namespace reads and writes the same keys.
pub async fn settings_shared_across_namespaces(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    a.set_setting(SetSettingRequest { key: "shared".into(), value: "from-a".into() }).await.unwrap();
    assert_eq!(b.get_setting("shared").await.unwrap().as_deref(), Some("from-a"));
    assert!(b
        .set_setting_if(SetSettingIfRequest {
            key: "shared".into(),
            expected: Some("from-a".into()),
            value: "from-b".into()
        })
        .await
        .unwrap());
    assert_eq!(a.get_setting("shared").await.unwrap().as_deref(), Some("from-b"));
    assert!(b.delete_setting("shared").await.unwrap());
    assert_eq!(a.get_setting("shared").await.unwrap(), None);
}

/// Values are opaque: empty, unicode and multi-line text round-trip exactly.
pub async fn settings_values_round_trip(h: &dyn Harness) {
    let s = open(h, "default").await;
    for (k, v) in [("empty", ""), ("uni", "héllo ✓ 日本"), ("json", "{\n  \"a\": [1, 2]\n}")] {
        s.set_setting(SetSettingRequest { key: k.to_string(), value: v.to_string() }).await.unwrap();
        assert_eq!(s.get_setting(k).await.unwrap().as_deref(), Some(v));
    }
}

/// An empty key is `InvalidArgument` and nothing is written.
pub async fn settings_empty_key_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(
        s.set_setting(SetSettingRequest { key: "".into(), value: "v".into() }).await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.set_setting_if(SetSettingIfRequest { key: "".into(), expected: None, value: "v".into() }).await,
        ErrorKind::InvalidArgument,
    );
    assert!(s.list_settings().await.unwrap().is_empty());
}

/// An oversized key (over 1 KiB) or value (over 1 MiB) is `InvalidArgument`.
pub async fn settings_oversized_key_or_value_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    let long_key = "k".repeat(flexiq_core::settings::MAX_SETTING_KEY_BYTES + 1);
    let big_value = "v".repeat(flexiq_core::settings::MAX_SETTING_VALUE_BYTES + 1);
    assert_kind(
        s.set_setting(SetSettingRequest { key: long_key.clone(), value: "v".into() }).await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.set_setting(SetSettingRequest { key: "k".into(), value: big_value.clone() }).await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.set_setting_if(SetSettingIfRequest { key: "k".into(), expected: None, value: big_value.clone() })
            .await,
        ErrorKind::InvalidArgument,
    );
    assert_eq!(s.get_setting("k").await.unwrap(), None);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_settings {
    ($callback:path, $make:path) => {
        $callback!($make;
            settings::settings_get_unset_is_none,
            settings::settings_set_and_overwrite,
            settings::settings_set_if_expected_none,
            settings::settings_set_if_matching_writes,
            settings::settings_set_if_stale_is_false,
            settings::settings_set_if_race_has_one_winner,
            settings::settings_delete_true_then_false,
            settings::settings_list_everything,
            settings::settings_shared_across_namespaces,
            settings::settings_values_round_trip,
            settings::settings_empty_key_is_invalid,
            settings::settings_oversized_key_or_value_is_invalid,
        );
    };
}
