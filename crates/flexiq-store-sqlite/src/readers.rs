//! The pool of read connections: a few threads, each owning one connection, taking closures
//! from one shared queue. WAL lets them read while the writer writes.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

use rusqlite::Connection;

/// A read to run on some reader thread.
pub(crate) type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

/// Starts one thread per connection; they run what was queued, then exit (closing their
/// connections) once the returned sender is dropped.
pub(crate) type Readers = (mpsc::Sender<ReadJob>, Vec<thread::JoinHandle<()>>);

/// Starts the pool (see [`Readers`]).
pub(crate) fn spawn(conns: Vec<Connection>) -> std::io::Result<Readers> {
    let (tx, rx) = mpsc::channel::<ReadJob>();
    let rx = Arc::new(Mutex::new(rx));
    let mut threads = Vec::with_capacity(conns.len());
    for (i, conn) in conns.into_iter().enumerate() {
        let rx = rx.clone();
        let t = thread::Builder::new().name(format!("flexiq-sqlite-read-{i}")).spawn(move || loop {
            let job = {
                let Ok(guard) = rx.lock() else { return };
                match guard.recv() {
                    Ok(job) => job,
                    Err(_) => return,
                }
            };
            job(&conn);
        })?;
        threads.push(t);
    }
    Ok((tx, threads))
}
