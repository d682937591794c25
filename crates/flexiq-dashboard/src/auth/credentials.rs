//! The dashboard's credentials, kept in the store's settings under the reserved `auth:` prefix.
//!
//! - The password is one argon2id hash in PHC form at [`PASSWORD_KEY`]; the plain text is never
//!   stored. Hashing is deliberately slow, which is why logins are also rate-limited.
//! - Bearer tokens are `fqd_<id>_<secret>`: the id names the setting
//!   (`auth:dashboard:token:<id>`), which holds the token's name and the SHA-256 of its secret.
//!   A token carries 256 random bits, so a fast hash is enough and every API call can check one
//!   without argon2's cost; the comparison is constant-time.
//!
//! Because they live in the store, every dashboard process on the same store shares them, and
//! `flexiq dashboard set-password` works against whatever URL the server runs on.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use flexiq::Queue;
use rand::RngCore as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{ApiError, ApiResult};

/// Setting holding the argon2id hash of the dashboard password.
pub const PASSWORD_KEY: &str = "auth:dashboard:password";
/// Prefix of the settings holding bearer tokens (one per token id).
pub const TOKEN_PREFIX: &str = "auth:dashboard:token:";
/// Shortest password accepted (characters).
pub const MIN_PASSWORD_CHARS: usize = 8;
/// Longest password accepted (bytes).
pub const MAX_PASSWORD_BYTES: usize = 1024;
/// Longest token name (bytes).
pub const MAX_TOKEN_NAME_BYTES: usize = 64;

/// What a token's setting holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// Who the token is for, as recorded with every write it makes.
    pub name: String,
    /// SHA-256 of the secret part, hex.
    pub sha256: String,
    /// When it was created (Unix ms).
    pub created_at: i64,
}

/// A token just created: the text to hand out (shown once) and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToken {
    /// The token id (the setting key's last part).
    pub id: String,
    /// The full bearer token.
    pub token: String,
}

fn check_password(password: &str) -> ApiResult<()> {
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(ApiError::invalid(format!("password must be at least {MIN_PASSWORD_CHARS} characters")));
    }
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(ApiError::invalid(format!("password is over {MAX_PASSWORD_BYTES} bytes")));
    }
    Ok(())
}

/// Hashes `password` with argon2id and a fresh salt (PHC string).
pub fn hash_password(password: &str) -> ApiResult<String> {
    check_password(password)?;
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let salt =
        SaltString::encode_b64(&salt).map_err(|e| ApiError::internal(format!("password salt: {e}")))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| ApiError::internal(format!("password hash: {e}")))
}

/// Whether `candidate` matches the PHC hash `stored`. A malformed hash matches nothing.
pub fn password_matches(stored: &str, candidate: &str) -> bool {
    match PasswordHash::new(stored) {
        Ok(parsed) => Argon2::default().verify_password(candidate.as_bytes(), &parsed).is_ok(),
        Err(_) => false,
    }
}

/// Sets (or replaces) the dashboard password.
pub async fn set_password(queue: &Queue, password: &str) -> ApiResult<()> {
    let hash = hash_password(password)?;
    queue.set_setting(PASSWORD_KEY, &hash).await?;
    Ok(())
}

/// Removes the dashboard password; false when none was set.
pub async fn clear_password(queue: &Queue) -> ApiResult<bool> {
    Ok(queue.delete_setting(PASSWORD_KEY).await?)
}

/// Whether `candidate` is the dashboard password (false when none is set).
pub async fn verify_password(queue: &Queue, candidate: &str) -> ApiResult<bool> {
    if candidate.len() > MAX_PASSWORD_BYTES {
        return Ok(false);
    }
    let Some(stored) = queue.get_setting(PASSWORD_KEY).await? else {
        return Ok(false);
    };
    // argon2 is CPU-bound for tens of milliseconds: keep it off the async workers.
    let candidate = candidate.to_string();
    tokio::task::spawn_blocking(move || password_matches(&stored, &candidate))
        .await
        .map_err(|e| ApiError::internal(format!("password check: {e}")))
}

fn random_text(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    URL_SAFE_NO_PAD.encode(buf)
}

fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Creates a bearer token named `name`; the returned text is the only copy of its secret.
pub async fn create_token(queue: &Queue, name: &str) -> ApiResult<NewToken> {
    if name.trim().is_empty() || name.len() > MAX_TOKEN_NAME_BYTES || name.chars().any(char::is_control) {
        return Err(ApiError::invalid(format!(
            "token name {name:?} must be 1 to {MAX_TOKEN_NAME_BYTES} bytes of printable text"
        )));
    }
    let mut id = [0u8; 8];
    rand::rng().fill_bytes(&mut id);
    let id = hex::encode(id);
    let secret = random_text(32);
    let record =
        TokenRecord { name: name.to_string(), sha256: sha256_hex(&secret), created_at: queue.now_ms() };
    let value =
        serde_json::to_string(&record).map_err(|e| ApiError::internal(format!("token record: {e}")))?;
    queue.set_setting(&format!("{TOKEN_PREFIX}{id}"), &value).await?;
    Ok(NewToken { token: format!("fqd_{id}_{secret}"), id })
}

/// Every token's id and record (secrets are not kept, so none is shown).
pub async fn list_tokens(queue: &Queue) -> ApiResult<Vec<(String, TokenRecord)>> {
    let all = queue.list_settings().await?;
    Ok(all
        .range(TOKEN_PREFIX.to_string()..)
        .take_while(|(k, _)| k.starts_with(TOKEN_PREFIX))
        .filter_map(|(k, v)| {
            let record = serde_json::from_str(v).ok()?;
            Some((k[TOKEN_PREFIX.len()..].to_string(), record))
        })
        .collect())
}

/// Revokes the token with this id; false when none has it.
pub async fn revoke_token(queue: &Queue, id: &str) -> ApiResult<bool> {
    Ok(queue.delete_setting(&format!("{TOKEN_PREFIX}{id}")).await?)
}

/// The token's name when `token` is a valid bearer token of this store.
pub async fn verify_token(queue: &Queue, token: &str) -> ApiResult<Option<String>> {
    let Some((id, secret)) = token.strip_prefix("fqd_").and_then(|rest| rest.split_once('_')) else {
        return Ok(None);
    };
    if id.is_empty() || id.len() > 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let Some(value) = queue.get_setting(&format!("{TOKEN_PREFIX}{id}")).await? else {
        return Ok(None);
    };
    let Ok(record) = serde_json::from_str::<TokenRecord>(&value) else {
        return Ok(None);
    };
    let matches: bool = sha256_hex(secret).as_bytes().ct_eq(record.sha256.as_bytes()).into();
    Ok(matches.then_some(record.name))
}

/// Whether any credential (password or token) is configured.
pub async fn auth_configured(queue: &Queue) -> ApiResult<bool> {
    if queue.get_setting(PASSWORD_KEY).await?.is_some() {
        return Ok(true);
    }
    Ok(!list_tokens(queue).await?.is_empty())
}

/// A random session id or CSRF token (256 bits, base64url).
pub fn random_secret() -> String {
    random_text(32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_hashes_verify_and_differ() {
        let a = hash_password("correct horse").unwrap();
        let b = hash_password("correct horse").unwrap();
        assert_ne!(a, b, "each hash has its own salt");
        assert!(a.starts_with("$argon2id$"), "{a}");
        assert!(password_matches(&a, "correct horse"));
        assert!(!password_matches(&a, "wrong horse"));
        assert!(!password_matches("not a hash", "correct horse"));
    }

    #[test]
    fn short_passwords_are_refused() {
        let err = hash_password("short").unwrap_err();
        assert_eq!(err.code, "invalid_argument");
    }
}
