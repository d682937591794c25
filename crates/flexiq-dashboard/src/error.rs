//! The API's one error type and how it becomes an HTTP answer.
//!
//! Every failure leaves the server as a JSON body `{"error": {"code", "message"}}` with the
//! status its meaning calls for, so clients branch on `code` (stable, snake case) and people
//! read `message` (lowercase, naming the ids involved). Engine errors map by kind; the
//! extractor rejections (malformed JSON, oversized bodies, bad query strings) are turned into
//! the same shape by [`ApiJson`], [`ApiQuery`] and the fallback, never axum's plain text.

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use flexiq::ErrorKind;
use serde::de::DeserializeOwned;
use serde::Serialize;
use utoipa::ToSchema;

/// A failed API call: an HTTP status, a stable code and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// Stable snake-case code (`not_found`, `invalid_argument`, ...).
    pub code: &'static str,
    /// One lowercase line naming the ids involved.
    pub message: String,
}

/// The body of every error answer.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// The code and message of an error answer.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable snake-case code: `invalid_argument`, `not_found`, `conflict`, `unauthorized`,
    /// `forbidden`, `read_only`, `csrf`, `precondition_failed`, `payload_too_large`,
    /// `rate_limited`, `unsupported`, `no_route`, `backend`.
    pub code: String,
    /// One line for people.
    pub message: String,
}

impl ApiError {
    /// An error with this status and code.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into() }
    }

    /// 400 `invalid_argument`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_argument", message)
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 409 `conflict`.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message)
    }

    /// 401 `unauthorized`.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    /// 403 `forbidden`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 403 `read_only`: the server was started with `--read-only`.
    pub fn read_only() -> Self {
        Self::new(StatusCode::FORBIDDEN, "read_only", "the dashboard is read-only: writes are refused")
    }

    /// 403 `csrf`: a cookie-authenticated write without the session's CSRF token.
    pub fn csrf() -> Self {
        Self::new(StatusCode::FORBIDDEN, "csrf", "missing or wrong x-csrf-token header for this session")
    }

    /// 500 `backend`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "backend", message)
    }

    /// The JSON body of this error.
    pub fn body(&self) -> ErrorBody {
        ErrorBody { error: ErrorDetail { code: self.code.to_string(), message: self.message.clone() } }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::warn!(code = self.code, message = %self.message, "dashboard request failed");
        }
        (self.status, Json(self.body())).into_response()
    }
}

impl From<flexiq::Error> for ApiError {
    fn from(e: flexiq::Error) -> Self {
        let message = e.to_string();
        match e.kind() {
            Some(ErrorKind::InvalidArgument) => ApiError::invalid(message),
            Some(ErrorKind::NotFound) => ApiError::not_found(message),
            Some(
                ErrorKind::Conflict | ErrorKind::Superseded | ErrorKind::QueueFull | ErrorKind::TaskRevoked,
            ) => ApiError::conflict(message),
            Some(ErrorKind::Unsupported) => Self::new(StatusCode::NOT_IMPLEMENTED, "unsupported", message),
            Some(ErrorKind::Timeout) => Self::new(StatusCode::GATEWAY_TIMEOUT, "timeout", message),
            Some(ErrorKind::Closed) => Self::new(StatusCode::SERVICE_UNAVAILABLE, "closed", message),
            _ => ApiError::internal(message),
        }
    }
}

impl From<flexiq::core::Error> for ApiError {
    fn from(e: flexiq::core::Error) -> Self {
        ApiError::from(flexiq::Error::from(e))
    }
}

/// The result of a handler.
pub type ApiResult<T> = Result<T, ApiError>;

/// `Json<T>` whose rejections are typed API errors: 413 for a body over the limit, 415 for a
/// missing JSON content type, 400 for anything that does not parse.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(ApiJson(v)),
            Err(rejection) => Err(json_rejection(&rejection)),
        }
    }
}

fn json_rejection(r: &JsonRejection) -> ApiError {
    let status = r.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(status, "payload_too_large", format!("request body is too large: {}", r.body_text()))
    } else if status == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        ApiError::new(status, "unsupported_media_type", "request body must be application/json")
    } else {
        ApiError::invalid(format!("malformed json body: {}", r.body_text()))
    }
}

/// `Query<T>` whose rejections are 400 `invalid_argument` with the parser's reason.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(ApiQuery(v)),
            Err(rejection) => Err(query_rejection(&rejection)),
        }
    }
}

fn query_rejection(r: &QueryRejection) -> ApiError {
    ApiError::invalid(format!("bad query string: {}", r.body_text()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_kinds_map_to_statuses() {
        let status = |e: flexiq::core::Error| ApiError::from(e).status;
        assert_eq!(status(flexiq::core::Error::invalid("x")), StatusCode::BAD_REQUEST);
        assert_eq!(status(flexiq::core::Error::JobNotFound(flexiq::JobId::new())), StatusCode::NOT_FOUND);
        assert_eq!(status(flexiq::core::Error::Conflict("x".into())), StatusCode::CONFLICT);
        assert_eq!(status(flexiq::core::Error::backend("down")), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
