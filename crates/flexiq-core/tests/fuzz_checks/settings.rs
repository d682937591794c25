//! Settings keys and values: the deployment-wide key/value surface takes any key and value a
//! caller sends, and the reserved prefixes decide what only the runtime may write. Validation
//! is exactly the documented size rules, and reservation exactly the prefix list.
//!
//! Input: `key \n value (the rest)`.

use flexiq_core::settings::{
    is_reserved_setting, reserved_setting_prefixes, validate_setting_key, validate_setting_value,
    MAX_SETTING_KEY_BYTES, MAX_SETTING_VALUE_BYTES,
};
use flexiq_core::store::{SetSettingIfRequest, SetSettingRequest};

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let key = f.text();
    let value = String::from_utf8_lossy(&f.rest()).into_owned();

    let key_ok = validate_setting_key(&key);
    assert_eq!(key_ok.is_ok(), !key.is_empty() && key.len() <= MAX_SETTING_KEY_BYTES, "{key:?}");
    let value_ok = validate_setting_value(&key, &value);
    assert_eq!(value_ok.is_ok(), value.len() <= MAX_SETTING_VALUE_BYTES);
    for e in [key_ok.err(), value_ok.err()].into_iter().flatten() {
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    }

    let reserved = is_reserved_setting(&key);
    assert_eq!(reserved, reserved_setting_prefixes().iter().any(|p| key.starts_with(p)), "{key:?}");
    // Extending a reserved key keeps it reserved.
    assert!(!reserved || is_reserved_setting(&format!("{key}{value}")));

    let set = SetSettingRequest { key: key.clone(), value: value.clone() };
    let set_if = SetSettingIfRequest { key: key.clone(), expected: None, value };
    assert_eq!(set.validate().is_ok(), set_if.validate().is_ok());
    assert_eq!(
        set.validate().is_ok(),
        validate_setting_key(&key).is_ok() && validate_setting_value(&key, &set.value).is_ok()
    );
}
