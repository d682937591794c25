//! Long-lived threads that run Python handlers.
//!
//! A thread that takes the GIL without a Python thread state of its own gets a fresh one and
//! loses it again when it lets go; CPython frees the state's stack chunk with `munmap`, and on
//! a multi-core machine every `munmap` interrupts the other cores to flush their TLBs. Paid
//! once per job, that was the largest single cost of a no-op Python worker. These threads take
//! a thread state once, keep it while they wait (GIL released), and reuse it for every job.
//!
//! A job goes to an idle thread when there is one; otherwise a new thread is started, so a
//! handler that overran its timeout and still runs never delays the next job. Threads end
//! when the pool is closed, after their current job; closing waits briefly for them and
//! leaves a thread stuck in an overrunning handler behind, as a blocking pool would.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use pyo3::prelude::*;
use tokio::sync::oneshot;

/// How long closing waits for handler threads to end.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// A handler call; what it returns hands its result to the waiting caller.
type Job = Box<dyn FnOnce(Python<'_>) -> Deliver + Send>;
/// Hands a finished job's result over (run once the thread counts as idle again).
type Deliver = Box<dyn FnOnce() + Send>;

struct Shared {
    jobs: Mutex<mpsc::Receiver<Job>>,
    /// Threads waiting for a job and not yet promised one.
    idle: AtomicUsize,
}

/// Python handler threads of one running worker.
pub(crate) struct HandlerThreads {
    tx: Mutex<Option<mpsc::Sender<Job>>>,
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl HandlerThreads {
    pub(crate) fn new() -> HandlerThreads {
        let (tx, rx) = mpsc::channel();
        HandlerThreads {
            tx: Mutex::new(Some(tx)),
            shared: Arc::new(Shared { jobs: Mutex::new(rx), idle: AtomicUsize::new(0) }),
            threads: Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` with the GIL on a handler thread; `None` when the pool is closed or the
    /// thread could not be started.
    pub(crate) async fn run<T, F>(&self, f: F) -> Option<T>
    where
        T: Send + 'static,
        F: FnOnce(Python<'_>) -> T + Send + 'static,
    {
        let (done_tx, done_rx) = oneshot::channel();
        let job: Job = Box::new(move |py| {
            let out = f(py);
            Box::new(move || {
                let _ = done_tx.send(out);
            })
        });
        {
            let tx = self.tx.lock();
            let tx = tx.as_ref()?;
            if !self.take_idle() && !self.start_thread() {
                return None;
            }
            tx.send(job).ok()?;
        }
        done_rx.await.ok()
    }

    /// Promises the next job to an idle thread, if one is waiting.
    fn take_idle(&self) -> bool {
        self.shared.idle.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).is_ok()
    }

    fn start_thread(&self) -> bool {
        let shared = self.shared.clone();
        let spawned = std::thread::Builder::new()
            .name("flexiq-py-handler".into())
            .spawn(move || Python::attach(|py| py.detach(|| serve(&shared))));
        match spawned {
            Ok(h) => {
                self.threads.lock().push(h);
                true
            }
            Err(_) => false,
        }
    }

    /// Stops taking jobs and waits (up to [`CLOSE_WAIT`]) for the threads to end; a thread
    /// still inside a handler that overran its timeout is left to finish on its own. Call
    /// with the GIL released.
    pub(crate) fn close(&self) {
        self.tx.lock().take();
        let threads = std::mem::take(&mut *self.threads.lock());
        let deadline = Instant::now() + CLOSE_WAIT;
        while threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        for t in threads.into_iter().filter(|t| t.is_finished()) {
            let _ = t.join();
        }
    }
}

/// A thread's loop: its thread state stays alive across jobs while the GIL is released. The
/// thread counts itself idle before it hands the result over, so the job its caller sends
/// next finds it idle instead of starting another thread.
fn serve(shared: &Shared) {
    loop {
        let next = shared.jobs.lock().recv();
        let Ok(job) = next else { return };
        let deliver = Python::attach(job);
        shared.idle.fetch_add(1, Ordering::AcqRel);
        deliver();
    }
}
