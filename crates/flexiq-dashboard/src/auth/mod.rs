//! Who may use the dashboard: credentials in the store, sessions, the login limiter and the
//! guard in front of every route.

pub mod credentials;
pub mod guard;
pub mod limiter;
pub mod session;

pub use credentials::{
    auth_configured, clear_password, create_token, list_tokens, revoke_token, set_password, NewToken,
    TokenRecord, PASSWORD_KEY, TOKEN_PREFIX,
};
pub use guard::Principal;
pub use session::{CSRF_HEADER, SESSION_COOKIE};
