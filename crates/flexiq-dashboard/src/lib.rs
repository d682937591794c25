//! flexiq-dashboard: operate a flexiq store from a browser and over HTTP.
//!
//! The crate sits beside the command line, above the runtime: it holds HTTP and HTML, never
//! SQL, and talks to any store (SQLite, PostgreSQL, Redis) through the [`flexiq::Queue`] API.
//!
//! - [`serve`] starts the server: a JSON API under `/api/v1` ([`api`]) described by the
//!   OpenAPI document at `/api/v1/openapi.json`, the pages ([`ui`]), and Prometheus `/metrics`.
//! - [`auth`] keeps the password (argon2id) and bearer tokens in the store's `auth:` settings,
//!   issues HttpOnly SameSite=Strict session cookies with a CSRF token per session, limits
//!   login attempts, and guards every route; [`audit`] records every write on the events
//!   stream.
//! - [`DashboardConfig`] says where to listen and whether writes are refused (`read_only`);
//!   a non-loopback bind with no credential configured is refused.

pub mod api;
pub mod audit;
pub mod auth;
pub mod config;
pub mod error;
pub mod server;
pub mod state;
pub mod ui;

pub use config::DashboardConfig;
pub use error::{ApiError, ApiResult};
pub use server::{app_router, openapi, serve, ServeError, ServerHandle};
pub use state::{AppState, Dashboard};
