//! Browser sessions: an opaque id in an HttpOnly, SameSite=Strict cookie, and the session's
//! CSRF token that every cookie-authenticated write must echo in the `x-csrf-token` header.
//!
//! Sessions live in this process's memory: restarting the server logs everyone out, which is
//! the safe direction. A session unused for the configured idle time is gone.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum_extra::extract::cookie::{Cookie, SameSite};

use super::credentials::random_secret;

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "flexiq_session";
/// Header carrying the CSRF token on writes.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// Most sessions kept at once; the least recently used go first beyond it.
const MAX_SESSIONS: usize = 10_000;

/// One logged-in browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Who, as recorded with every write (`password`, `token:<name>` or `anonymous`).
    pub who: String,
    /// The token writes must carry in `x-csrf-token`.
    pub csrf: String,
    last_used: Instant,
}

/// The sessions of this process.
#[derive(Debug)]
pub struct SessionStore {
    idle: Duration,
    sessions: Mutex<HashMap<String, Session>>,
}

impl SessionStore {
    /// An empty store whose sessions expire after `idle` unused.
    pub fn new(idle: Duration) -> Self {
        SessionStore { idle, sessions: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // A panic while holding the lock leaves a plain map behind; keep serving.
        self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a session for `who`; returns its id and the session.
    pub fn create(&self, who: &str) -> (String, Session) {
        let id = random_secret();
        let session = Session { who: who.to_string(), csrf: random_secret(), last_used: Instant::now() };
        let mut map = self.lock();
        let idle = self.idle;
        map.retain(|_, s| s.last_used.elapsed() < idle);
        if map.len() >= MAX_SESSIONS {
            if let Some(oldest) = map.iter().min_by_key(|(_, s)| s.last_used).map(|(k, _)| k.clone()) {
                map.remove(&oldest);
            }
        }
        map.insert(id.clone(), session.clone());
        (id, session)
    }

    /// The live session with this id, touched.
    pub fn get(&self, id: &str) -> Option<Session> {
        let mut map = self.lock();
        let expired = map.get(id).is_some_and(|s| s.last_used.elapsed() >= self.idle);
        if expired {
            map.remove(id);
            return None;
        }
        let s = map.get_mut(id)?;
        s.last_used = Instant::now();
        Some(s.clone())
    }

    /// Ends a session; false when there was none.
    pub fn remove(&self, id: &str) -> bool {
        self.lock().remove(id).is_some()
    }
}

/// The cookie that carries a session id: HttpOnly, SameSite=Strict, whole site.
pub fn session_cookie(id: String) -> Cookie<'static> {
    let mut c = Cookie::new(SESSION_COOKIE, id);
    c.set_http_only(true);
    c.set_same_site(SameSite::Strict);
    c.set_path("/");
    c
}

/// A cookie that clears the session cookie.
pub fn expired_session_cookie() -> Cookie<'static> {
    let mut c = session_cookie(String::new());
    c.make_removal();
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_round_trip_and_end() {
        let store = SessionStore::new(Duration::from_secs(60));
        let (id, s) = store.create("password");
        assert_eq!(store.get(&id).unwrap().csrf, s.csrf);
        assert!(store.get("other").is_none());
        assert!(store.remove(&id));
        assert!(store.get(&id).is_none());
    }

    #[test]
    fn idle_sessions_expire() {
        let store = SessionStore::new(Duration::ZERO);
        let (id, _) = store.create("password");
        assert!(store.get(&id).is_none());
    }

    #[test]
    fn cookie_is_http_only_and_strict() {
        let text = session_cookie("abc".into()).to_string();
        assert!(text.contains("HttpOnly"), "{text}");
        assert!(text.contains("SameSite=Strict"), "{text}");
    }
}
