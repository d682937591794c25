//! A webhook receiver on loopback: records every request and answers with scripted statuses.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use parking_lot::Mutex;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Received {
    pub(crate) fn header(&self, name: &str) -> String {
        self.headers[name].to_str().unwrap().to_string()
    }
}

#[derive(Default)]
struct Inner {
    got: Vec<Received>,
    /// Statuses to answer, in order; 200 once they run out.
    script: VecDeque<u16>,
}

/// A running receiver; its server stops when the test's runtime ends.
#[derive(Clone)]
pub(crate) struct Receiver {
    pub(crate) addr: SocketAddr,
    inner: Arc<Mutex<Inner>>,
}

async fn hook(State(inner): State<Arc<Mutex<Inner>>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let mut i = inner.lock();
    i.got.push(Received { headers, body });
    StatusCode::from_u16(i.script.pop_front().unwrap_or(200)).unwrap()
}

impl Receiver {
    /// Starts a receiver answering `script` first, then 200.
    pub(crate) async fn start(script: &[u16]) -> Receiver {
        let inner = Arc::new(Mutex::new(Inner { got: Vec::new(), script: script.iter().copied().collect() }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new().route("/hook", post(hook)).with_state(inner.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { addr, inner }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    pub(crate) fn received(&self) -> Vec<Received> {
        self.inner.lock().got.clone()
    }
}
