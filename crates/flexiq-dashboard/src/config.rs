//! What a dashboard server is started with, and the one rule checked before it binds.
//!
//! A dashboard that anyone on the network can reach must not be open: binding a non-loopback
//! address is refused unless a password or a bearer token is configured in the store (see
//! [`crate::auth`]).

use std::net::SocketAddr;
use std::time::Duration;

use crate::error::ApiError;

/// Largest request body accepted by default (bytes); larger ones get 413.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;
/// Login attempts allowed per client address per minute by default.
pub const DEFAULT_LOGIN_ATTEMPTS_PER_MINUTE: u32 = 10;
/// How long a session lasts without use by default.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(8 * 3600);

/// How the dashboard serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DashboardConfig {
    /// Address to listen on (`127.0.0.1:8080`).
    pub bind: SocketAddr,
    /// Refuse every write with 403 `read_only`.
    pub read_only: bool,
    /// Serve `/metrics` without authentication (for a Prometheus scraper on a private
    /// network); otherwise it needs a bearer token or a session like the API.
    pub public_metrics: bool,
    /// Login attempts allowed per client address per minute (at least 1).
    pub login_attempts_per_minute: u32,
    /// Largest request body (bytes, at least 1,024).
    pub max_body_bytes: usize,
    /// A session expires after this long unused.
    pub session_idle: Duration,
}

impl Default for DashboardConfig {
    fn default() -> Self {
        DashboardConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            read_only: false,
            public_metrics: false,
            login_attempts_per_minute: DEFAULT_LOGIN_ATTEMPTS_PER_MINUTE,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            session_idle: DEFAULT_SESSION_IDLE,
        }
    }
}

impl DashboardConfig {
    /// Checks the numbers.
    pub fn validate(&self) -> Result<(), ApiError> {
        if self.login_attempts_per_minute == 0 {
            return Err(ApiError::invalid("login_attempts_per_minute must be at least 1"));
        }
        if self.max_body_bytes < 1024 {
            return Err(ApiError::invalid(format!(
                "max_body_bytes {} must be at least 1024",
                self.max_body_bytes
            )));
        }
        if self.session_idle.is_zero() {
            return Err(ApiError::invalid("session_idle must be positive"));
        }
        Ok(())
    }

    /// Refuses a non-loopback bind when no credential is configured.
    pub fn check_exposure(&self, auth_configured: bool) -> Result<(), ApiError> {
        if !auth_configured && !self.bind.ip().is_loopback() {
            return Err(ApiError::forbidden(format!(
                "refusing to serve on {} with no password or token configured: run `flexiq dashboard set-password` \
                 or `flexiq dashboard create-token`, or bind a loopback address",
                self.bind
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_dashboard_only_on_loopback() {
        let local = DashboardConfig::default();
        assert!(local.check_exposure(false).is_ok());
        let wide = DashboardConfig { bind: "0.0.0.0:8080".parse().unwrap(), ..local.clone() };
        let err = wide.check_exposure(false).unwrap_err();
        assert!(err.message.contains("0.0.0.0:8080"), "{}", err.message);
        assert!(wide.check_exposure(true).is_ok());
        let v6 = DashboardConfig { bind: "[::1]:9000".parse().unwrap(), ..local };
        assert!(v6.check_exposure(false).is_ok());
    }

    #[test]
    fn zero_limits_are_refused() {
        let c = DashboardConfig { login_attempts_per_minute: 0, ..Default::default() };
        assert!(c.validate().is_err());
        let c = DashboardConfig { max_body_bytes: 10, ..Default::default() };
        assert!(c.validate().is_err());
        assert!(DashboardConfig::default().validate().is_ok());
    }
}
