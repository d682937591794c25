//! The state every handler shares: the queue handle, the configuration and the auth machinery.

use std::sync::Arc;

use flexiq::Queue;

use crate::auth::limiter::LoginLimiter;
use crate::auth::session::SessionStore;
use crate::config::DashboardConfig;

/// One dashboard server's shared state.
#[derive(Debug)]
pub struct Dashboard {
    /// The namespace of the store being operated.
    pub queue: Queue,
    /// How it serves.
    pub config: DashboardConfig,
    /// Logged-in browsers.
    pub sessions: SessionStore,
    /// Login attempts per client address.
    pub limiter: LoginLimiter,
    /// Whether a password or token was configured when the server started; when not, the
    /// dashboard is open (loopback only) and every visitor gets an anonymous session.
    pub auth_required: bool,
}

/// The handle handlers receive.
pub type AppState = Arc<Dashboard>;

impl Dashboard {
    /// State for serving `queue` with `config`.
    pub fn new(queue: Queue, config: DashboardConfig, auth_required: bool) -> AppState {
        Arc::new(Dashboard {
            sessions: SessionStore::new(config.session_idle),
            limiter: LoginLimiter::new(config.login_attempts_per_minute),
            queue,
            config,
            auth_required,
        })
    }
}
