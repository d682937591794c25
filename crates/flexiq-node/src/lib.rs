//! flexiq's Node SDK: the napi-rs addon behind the `flexiq` npm package.
//!
//! This crate is a thin bridge to `flexiq-runtime`: it parses what JavaScript passes in,
//! calls the runtime and maps its errors; it holds no SQL, retry or state-machine logic. The
//! package's JS layer (`index.cjs` and `lib/`) wraps these classes into the public `Queue`:
//! it JSON-serialises payloads and results, turns errors into `FlexiqError`s with a `code`,
//! makes partial streams async iterators and wraps user handlers for the worker.
//!
//! Calls the spec makes synchronous (index-backed point reads and writes such as `getJob`,
//! `countPendingByQueue`, settings) block on the runtime; everything else returns a Promise
//! and runs on the addon's tokio threads, off the JS event loop.

/// The addon's Rust allocations (jobs, payloads, contexts, futures) come from mimalloc: many
/// are made on the runtime's threads and freed on the event loop's thread, which glibc's
/// per-thread arenas turn into lock traffic and consolidation passes (a drain at concurrency
/// 8 ran 15-25% faster with it). mimalloc's v2 line: v3's thread-local heaps crashed a
/// process whose worker threads loaded the addon one after another
/// (`__test__/threads-host.mjs`).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod args;
mod bridge;
mod context;
mod error;
mod events;
mod options;
mod queue;
mod schedule;
mod types;
mod worker;
