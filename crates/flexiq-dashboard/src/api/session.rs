//! Logging in and out: `POST /auth/login` turns a password (or a bearer token, for browsers of
//! token-only deployments) into a session cookie, `GET /auth/session` says who the caller is
//! and hands out the CSRF token, `POST /auth/logout` ends the session.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::{Extension, Json};
use axum_extra::extract::cookie::CookieJar;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::credentials::{verify_password, verify_token};
use crate::auth::guard::Principal;
use crate::auth::session::{expired_session_cookie, session_cookie};
use crate::error::{ApiError, ApiJson, ApiResult, ErrorBody};
use crate::state::AppState;

/// Credentials: a password, or a bearer token.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    /// The dashboard password.
    pub password: Option<String>,
    /// A bearer token (`fqd_...`).
    pub token: Option<String>,
}

/// Who the caller is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SessionView {
    /// Whether the caller is authenticated (always true on an open dashboard).
    pub authenticated: bool,
    /// Who, as recorded with writes.
    pub who: Option<String>,
    /// Send this in `x-csrf-token` with every write made with the session cookie.
    pub csrf_token: Option<String>,
    /// Whether the dashboard asks for credentials.
    pub auth_required: bool,
    /// Whether writes are refused.
    pub read_only: bool,
}

fn view(app: &AppState, p: Option<&Principal>) -> SessionView {
    SessionView {
        authenticated: p.is_some(),
        who: p.map(Principal::who),
        csrf_token: p.and_then(Principal::csrf).map(str::to_string),
        auth_required: app.auth_required,
        read_only: app.config.read_only,
    }
}

/// Who the caller is, and the session's CSRF token.
#[utoipa::path(get, path = "/auth/session", tag = "auth", responses((status = 200, body = SessionView)))]
pub async fn get_session(
    State(app): State<AppState>,
    principal: Option<Extension<Principal>>,
) -> Json<SessionView> {
    Json(view(&app, principal.as_ref().map(|e| &e.0)))
}

/// Logs in with the password or a token; sets the session cookie (HttpOnly, SameSite=Strict).
/// 401 for wrong credentials, 429 when this address tried too often.
#[utoipa::path(post, path = "/auth/login", tag = "auth", request_body = LoginBody,
    responses((status = 200, body = SessionView), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn login(
    State(app): State<AppState>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    jar: CookieJar,
    ApiJson(body): ApiJson<LoginBody>,
) -> ApiResult<impl IntoResponse> {
    if !app.limiter.allow(addr.ip()) {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!("too many login attempts from {}: wait a minute", addr.ip()),
        ));
    }
    let who = match (body.password.as_deref(), body.token.as_deref()) {
        (Some(password), None) => {
            verify_password(&app.queue, password).await?.then(|| "password".to_string())
        }
        (None, Some(token)) => verify_token(&app.queue, token).await?.map(|name| format!("token:{name}")),
        _ => return Err(ApiError::invalid("login needs exactly one of password and token")),
    };
    let Some(who) = who else {
        tracing::warn!(client = %addr.ip(), "dashboard login refused");
        return Err(ApiError::unauthorized("wrong password or token"));
    };
    let (id, session) = app.sessions.create(&who);
    let principal = Principal::Session { id: id.clone(), session };
    let jar = jar.add(session_cookie(id));
    Ok((jar, Json(view(&app, Some(&principal)))))
}

/// Ends the caller's session and clears the cookie.
#[utoipa::path(post, path = "/auth/logout", tag = "auth", responses((status = 204), (status = 403, body = ErrorBody)))]
pub async fn logout(
    State(app): State<AppState>,
    principal: Option<Extension<Principal>>,
    jar: CookieJar,
) -> impl IntoResponse {
    if let Some(Extension(Principal::Session { id, .. })) = principal {
        app.sessions.remove(&id);
    }
    (jar.add(expired_session_cookie()), StatusCode::NO_CONTENT)
}
