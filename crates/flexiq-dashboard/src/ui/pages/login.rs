//! The login page: a password field (or a token) posted to `/api/v1/auth/login` by the script.

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Extension;
use maud::{html, DOCTYPE};

use crate::auth::guard::Principal;
use crate::state::AppState;

/// `GET /login` (straight to the overview when already logged in or when the dashboard is open).
pub async fn login(State(app): State<AppState>, who: Option<Extension<Principal>>) -> Response {
    if who.is_some() {
        return Redirect::to("/").into_response();
    }
    let body = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "Log in · flexiq" }
                link rel="stylesheet" href="/assets/app.css";
                script src="/assets/app.js" defer {}
            }
            body.login {
                main {
                    h1 { "flexiq" }
                    p.muted { (app.queue.backend()) " · " (app.queue.namespace()) }
                    form #login-form {
                        label { "Password" input #password type="password" name="password" autocomplete="current-password" autofocus; }
                        details { summary { "Use a token instead" }
                            label { "Bearer token" input #token type="password" name="token" autocomplete="off"; }
                        }
                        button type="submit" { "Log in" }
                        p #flash role="status" {}
                    }
                }
            }
        }
    };
    body.into_response()
}
