//! The middleware in front of every route: who is calling, may they, and the record of writes.
//!
//! A caller is a bearer token (`Authorization: Bearer fqd_...`), a session cookie, or — only
//! when no credential is configured and the server is on loopback — anonymous. Reads need any
//! of them (pages without one redirect to `/login`, the API answers 401). Writes (any method
//! but GET / HEAD / OPTIONS) are refused with 403 `read_only` on a read-only server, and a
//! cookie-authenticated write must carry its session's CSRF token in `x-csrf-token`
//! (a cross-site form can set neither the header nor, with SameSite=Strict, the cookie).
//! Bearer tokens are not ambient credentials, so they need no CSRF token. Every successful
//! write is then recorded ([`crate::audit`]).

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum_extra::extract::cookie::CookieJar;
use subtle::ConstantTimeEq;

use super::credentials::verify_token;
use super::session::{session_cookie, Session, CSRF_HEADER, SESSION_COOKIE};
use crate::audit::{self, WriteRecord};
use crate::error::ApiError;
use crate::state::AppState;

/// Who is calling; handlers read it from the request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// A browser session.
    Session {
        /// The session id (the cookie's value).
        id: String,
        /// The session.
        session: Session,
    },
    /// A bearer token, by name.
    Token(String),
    /// Nobody in particular: the dashboard has no credential configured (loopback only).
    Anonymous,
}

impl Principal {
    /// The name recorded with writes.
    pub fn who(&self) -> String {
        match self {
            Principal::Session { session, .. } => session.who.clone(),
            Principal::Token(name) => format!("token:{name}"),
            Principal::Anonymous => "anonymous".to_string(),
        }
    }

    /// The CSRF token pages embed, when the caller has a session.
    pub fn csrf(&self) -> Option<&str> {
        match self {
            Principal::Session { session, .. } => Some(&session.csrf),
            _ => None,
        }
    }
}

/// Paths anyone may call.
fn is_public(app: &AppState, path: &str) -> bool {
    matches!(path, "/api/v1/openapi.json" | "/api/v1/auth/login" | "/api/v1/auth/session" | "/login")
        || path.starts_with("/assets/")
        || (path == "/metrics" && app.config.public_metrics)
}

fn is_write(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

fn wants_json(path: &str) -> bool {
    path.starts_with("/api/") || path == "/metrics"
}

async fn identify(
    app: &AppState,
    authorization: Option<String>,
    jar: &CookieJar,
) -> Result<Option<Principal>, ApiError> {
    if let Some(text) = authorization {
        let token = text.strip_prefix("Bearer ").unwrap_or_default().trim();
        return match verify_token(&app.queue, token).await? {
            Some(name) => Ok(Some(Principal::Token(name))),
            None => Err(ApiError::unauthorized("bearer token is not valid for this store")),
        };
    }
    if let Some(cookie) = jar.get(SESSION_COOKIE) {
        if let Some(session) = app.sessions.get(cookie.value()) {
            return Ok(Some(Principal::Session { id: cookie.value().to_string(), session }));
        }
    }
    Ok((!app.auth_required).then_some(Principal::Anonymous))
}

/// The guard itself (`axum::middleware::from_fn_with_state`).
pub async fn guard(State(app): State<AppState>, jar: CookieJar, mut req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    let authorization =
        req.headers().get(header::AUTHORIZATION).map(|v| v.to_str().unwrap_or_default().to_string());
    let mut principal = match identify(&app, authorization, &jar).await {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    if principal.is_none() && !is_public(&app, &path) {
        if wants_json(&path) {
            return ApiError::unauthorized(format!("{path} needs a session or a bearer token: log in first"))
                .into_response();
        }
        return Redirect::to("/login").into_response();
    }
    // An open dashboard still needs a session for its CSRF token: hand one out on a page load
    // or `GET /api/v1/auth/session` that arrives without one (not on every API read, so
    // scripts polling the API do not pile up sessions).
    let mut new_cookie = None;
    let hands_out_sessions =
        path == "/api/v1/auth/session" || !(path.starts_with("/api/") || path.starts_with("/assets/"));
    if principal == Some(Principal::Anonymous) && !is_write(&method) && hands_out_sessions {
        let (id, session) = app.sessions.create("anonymous");
        new_cookie = Some(session_cookie(id.clone()));
        principal = Some(Principal::Session { id, session });
    }
    let write = is_write(&method);
    if write && path != "/api/v1/auth/login" {
        if app.config.read_only && path != "/api/v1/auth/logout" {
            return ApiError::read_only().into_response();
        }
        match &principal {
            Some(Principal::Token(_)) => {}
            Some(Principal::Session { session, .. }) => {
                let sent = req.headers().get(CSRF_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
                if !bool::from(sent.as_bytes().ct_eq(session.csrf.as_bytes())) {
                    return ApiError::csrf().into_response();
                }
            }
            Some(Principal::Anonymous) | None => return ApiError::csrf().into_response(),
        }
    }
    let client = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip().to_string());
    if let Some(p) = &principal {
        req.extensions_mut().insert(p.clone());
    }
    let response = next.run(req).await;
    if write
        && response.status().is_success()
        && path != "/api/v1/auth/login"
        && path != "/api/v1/auth/logout"
    {
        let who = principal.as_ref().map(Principal::who).unwrap_or_default();
        let record = WriteRecord {
            who,
            client,
            method: method.to_string(),
            path,
            status: response.status().as_u16(),
            at_ms: app.queue.now_ms(),
        };
        audit::record(&app, record).await;
    }
    match new_cookie {
        Some(c) => (CookieJar::new().add(c), response).into_response(),
        None => response,
    }
}
