// Types of the events stream (`events()`, `on` / `once` / `off`, `readEvents`, `publishEvent`,
// `trimEvents`). Re-exported by `index.d.ts`, which types the Queue methods that take and
// return them. The event itself and the option objects are the addon's (`native.d.ts`:
// `QueueEvent`, `EventsOptions`, `ReadEventsOptions`, `TrimEventsOptions`,
// `PublishEventOptions`), passed through unchanged; `__test__/surface.test.mjs` holds
// `EventKind` equal to the kinds the engine names (`EVENT_KINDS`).

import type { QueueEvent } from './native';

/**
 * What an event reports: a job written as new (`enqueued`), claimed (`active`), reporting
 * `progress`, `completed`, `failed` for good, `retried`, `dead`-lettered, `stalled` (its lease
 * lapsed), `cancelled`, absorbing an enqueue (`deduplicated`), `removed`, given back
 * (`requeued`), `suspended` or `released` (its dependencies met); a queue `paused` or
 * `resumed`; or a `custom` event from `publishEvent`.
 */
export type EventKind = QueueEvent['kind'];

/** A name to filter or listen by: a kind, `'custom'` for every custom event, or a custom event's own name. */
export type EventName = EventKind | (string & {});

/**
 * The events of a namespace in order, as `queue.events(options)` returns them: an async
 * iterator that never ends by itself (between events it waits on the store) until `return()`
 * (which a `break` out of `for await` calls) or the queue's `close()`. A failed read rejects
 * `next()` once and ends it: open another with `after` the last event's `id` to go on.
 */
export interface EventStream extends AsyncIterableIterator<QueueEvent, undefined, undefined> {
  /** The next event, in commit order; `{ done: true }` once stopped. */
  next(): Promise<IteratorResult<QueueEvent, undefined>>;
  /** Stops reading at once, a waiting read included; events not yet taken are dropped. */
  return(): Promise<IteratorReturnResult<undefined>>;
}

/**
 * A listener of `queue.on(name, listener)`: called with each matching event, the queue as
 * `this`. What it throws, or its Promise rejects with, is emitted on the `'error'` listeners.
 */
export type QueueEventListener = (event: QueueEvent) => unknown;

/**
 * A listener of `queue.on('error', listener)`: a listener's error, or a failed read of the
 * stream (which is then reopened after the last event delivered, so none is lost).
 */
export type QueueErrorListener = (error: unknown) => void;
