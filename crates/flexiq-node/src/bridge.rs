//! Promises for the addon's hottest awaited calls, polled on the JS thread itself.
//!
//! napi-rs's `async fn` creates a thread-safe function for every call (V8 objects, a libuv
//! handle, its teardown), spawns two tasks (the call and a watcher of its panics) and runs the
//! call on a runtime thread, so each call costs two thread hand-offs on top of its store's
//! own. For a call whose store work is tens of microseconds, as a single enqueue is, that was
//! most of the call. Here the call's future is polled on the JS thread, inside the addon's
//! runtime context; its waker, fired by whatever thread the store answers on, queues the
//! call and wakes the event loop through one thread-safe function the JS thread keeps for as
//! long as it lives (only when the queue was empty: one wake-up polls every woken call).
//!
//! Polling on the event loop is safe because the futures never block: they wait on sockets
//! and channels, and the thread is marked as an event loop's (`flexiq_core::event_loop`), so
//! the SQLite store commits a small write on it only when that needs no wait (the write lock
//! free at once, no fsync, no checkpoint owed) and otherwise hands it to its writer thread.
//!
//! The thread-safe function is unreferenced while no call is pending, so an idle process
//! exits; it is referenced while any is.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::c_void;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use napi::bindgen_prelude::{within_runtime_if_available, PromiseRaw, ToNapiValue};
use napi::{sys, Env, JsError};
use parking_lot::Mutex;

use crate::error::Result;

/// Turns a call's output into a JS value on the JS thread.
type Settle = Box<dyn FnOnce(sys::napi_env) -> Result<sys::napi_value>>;

/// A pending call's future, yielding how to settle its promise.
type Call = Pin<Box<dyn Future<Output = Settle>>>;

/// What other threads hand to the JS thread: the calls whose wakers fired.
struct Shared {
    inner: Mutex<Woken>,
}

struct Woken {
    slots: Vec<u64>,
    /// The thread-safe function, null once Node finalized it (its environment is gone).
    tsfn: sys::napi_threadsafe_function,
}

// The raw thread-safe function is made to be called from any thread; `Woken` only ever
// holds it behind the mutex that its finalizer also takes.
unsafe impl Send for Woken {}

impl Shared {
    fn wake(&self, slot: u64) {
        let mut w = self.inner.lock();
        let first = w.slots.is_empty();
        w.slots.push(slot);
        if first && !w.tsfn.is_null() {
            // Non-blocking on an unbounded queue: fails only while Node is closing it, when
            // nothing is left to settle.
            unsafe {
                sys::napi_call_threadsafe_function(
                    w.tsfn,
                    ptr::null_mut(),
                    sys::ThreadsafeFunctionCallMode::nonblocking,
                )
            };
        }
    }
}

/// Wakes one call on its JS thread.
struct CallWaker {
    shared: Arc<Shared>,
    slot: u64,
}

impl Wake for CallWaker {
    fn wake(self: Arc<Self>) {
        self.shared.wake(self.slot);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.shared.wake(self.slot);
    }
}

struct Pending {
    deferred: sys::napi_deferred,
    call: Call,
    /// Made once per call: a call is polled two or three times.
    waker: Waker,
}

/// One JS thread's pending calls.
struct Local {
    env: sys::napi_env,
    shared: Arc<Shared>,
    tsfn: sys::napi_threadsafe_function,
    pending: RefCell<HashMap<u64, Pending>>,
    next: Cell<u64>,
}

thread_local! {
    static LOCAL: RefCell<Option<Rc<Local>>> = const { RefCell::new(None) };
}

fn local(env: sys::napi_env) -> Result<Rc<Local>> {
    if let Some(l) = LOCAL.with(|l| l.borrow().clone()) {
        if l.env == env {
            return Ok(l);
        }
    }
    flexiq_runtime::core::event_loop::mark_this_thread();
    let shared = Arc::new(Shared { inner: Mutex::new(Woken { slots: Vec::new(), tsfn: ptr::null_mut() }) });
    let mut name = ptr::null_mut();
    let label = "flexiq.settle";
    check(unsafe {
        sys::napi_create_string_utf8(env, label.as_ptr().cast(), label.len() as isize, &mut name)
    })?;
    let mut tsfn = ptr::null_mut();
    let finalize_data = Arc::into_raw(shared.clone()) as *mut c_void;
    check(unsafe {
        sys::napi_create_threadsafe_function(
            env,
            ptr::null_mut(),
            ptr::null_mut(),
            name,
            0,
            1,
            finalize_data,
            Some(finalized),
            ptr::null_mut(),
            Some(run_woken),
            &mut tsfn,
        )
    })?;
    check(unsafe { sys::napi_unref_threadsafe_function(env, tsfn) })?;
    shared.inner.lock().tsfn = tsfn;
    let l = Rc::new(Local { env, shared, tsfn, pending: RefCell::new(HashMap::new()), next: Cell::new(0) });
    LOCAL.with(|slot| *slot.borrow_mut() = Some(l.clone()));
    Ok(l)
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(napi::Status::from(status), "the promise bridge cannot be set up"))
    }
}

/// Node finalizes the thread-safe function when its environment goes: wakers that fire
/// later find it gone and do nothing.
unsafe extern "C" fn finalized(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    let shared = unsafe { Arc::from_raw(data as *const Shared) };
    shared.inner.lock().tsfn = ptr::null_mut();
    LOCAL.with(|l| {
        if let Ok(mut l) = l.try_borrow_mut() {
            *l = None;
        }
    });
}

/// The thread-safe function's callback, on the JS thread: polls every woken call.
unsafe extern "C" fn run_woken(
    env: sys::napi_env,
    _js: sys::napi_value,
    _ctx: *mut c_void,
    _data: *mut c_void,
) {
    if env.is_null() {
        return;
    }
    let Some(l) = LOCAL.with(|l| l.borrow().clone()) else { return };
    loop {
        let slots = std::mem::take(&mut l.shared.inner.lock().slots);
        if slots.is_empty() {
            break;
        }
        for slot in slots {
            l.poll(slot);
        }
    }
}

impl Local {
    fn poll(self: &Rc<Self>, slot: u64) {
        let Some(mut p) = self.pending.borrow_mut().remove(&slot) else { return };
        let mut cx = Context::from_waker(&p.waker);
        let polled =
            within_runtime_if_available(|| catch_unwind(AssertUnwindSafe(|| p.call.as_mut().poll(&mut cx))));
        let settle = match polled {
            Ok(Poll::Pending) => {
                self.pending.borrow_mut().insert(slot, p);
                return;
            }
            Ok(Poll::Ready(settle)) => settle,
            Err(_) => Box::new(|_| Err(napi::Error::from_reason("the call panicked"))) as Settle,
        };
        self.settle(p.deferred, settle);
        if self.pending.borrow().is_empty() {
            unsafe { sys::napi_unref_threadsafe_function(self.env, self.tsfn) };
        }
    }

    fn settle(&self, deferred: sys::napi_deferred, settle: Settle) {
        let env = self.env;
        match settle(env) {
            Ok(v) => unsafe { sys::napi_resolve_deferred(env, deferred, v) },
            Err(e) => unsafe { sys::napi_reject_deferred(env, deferred, JsError::from(e).into_value(env)) },
        };
    }
}

/// A Promise of `fut`'s output, polled on this JS thread and woken by the runtime's threads.
pub(crate) fn promise<'env, T, F>(env: &'env Env, fut: F) -> Result<PromiseRaw<'env, T>>
where
    T: ToNapiValue + 'static,
    F: Future<Output = Result<T>> + 'static,
{
    let raw = env.raw();
    let l = local(raw)?;
    let mut deferred = ptr::null_mut();
    let mut promise = ptr::null_mut();
    check(unsafe { sys::napi_create_promise(raw, &mut deferred, &mut promise) })?;
    let call = async move {
        let out = fut.await;
        Box::new(move |env| match out {
            Ok(v) => unsafe { T::to_napi_value(env, v) },
            Err(e) => Err(e),
        }) as Settle
    };
    let slot = l.next.get();
    l.next.set(slot + 1);
    if l.pending.borrow().is_empty() {
        check(unsafe { sys::napi_ref_threadsafe_function(raw, l.tsfn) })?;
    }
    let waker = Waker::from(Arc::new(CallWaker { shared: l.shared.clone(), slot }));
    l.pending.borrow_mut().insert(slot, Pending { deferred, call: Box::pin(call), waker });
    l.poll(slot);
    Ok(PromiseRaw::new(raw, promise))
}
