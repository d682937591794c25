//! The events operations write themselves, beside the change they report and in its
//! transaction: the ones a row change of `jobs` cannot show (see `events.rs`). Each statement
//! here writes nothing when the namespace has its events switched off.

/// The store clock in Unix ms, for events of calls that carry no time.
pub(crate) const CLOCK_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::int8";

/// True unless namespace `ns` (an SQL expression) has its events switched off.
pub(crate) fn events_on(ns: &str) -> String {
    format!("NOT EXISTS (SELECT 1 FROM {{S}}.events_off WHERE ns = {ns})")
}

/// `deduplicated` events in namespace `$1` at `$2`: one per kept job `$3` (in order) that
/// absorbed an enqueue under key `$4`, with the kept job's queue, task and attempt (from the
/// archive when it was archived).
pub(crate) fn deduplicated_sql() -> String {
    format!(
        "INSERT INTO {{S}}.events (ns, kind, job_id, queue, task, attempt, at_ms, data) \
         SELECT $1, 'deduplicated', u.id, coalesce(j.queue, a.queue), coalesce(j.task, a.task), \
           coalesce(j.attempt, a.attempt), $2, jsonb_build_object('key', u.key) \
         FROM unnest($3::uuid[], $4::text[]) WITH ORDINALITY AS u(id, key, o) \
         LEFT JOIN {{S}}.jobs j ON j.id = u.id LEFT JOIN {{S}}.archived_jobs a ON a.id = u.id \
         WHERE {} ORDER BY u.o",
        events_on("$1")
    )
}

/// A queue-level event of kind `kind` for the queue in column `queue` of the rows `from`
/// (an SQL source), in namespace `ns`, at `at` (SQL), carrying `data` (jsonb SQL).
pub(crate) fn queue_event_sql(kind: &str, ns: &str, from: &str, at: &str, data: &str) -> String {
    format!(
        "INSERT INTO {{S}}.events (ns, kind, queue, at_ms, data) \
         SELECT {ns}, '{kind}', queue, {at}, {data} FROM {from} WHERE {}",
        events_on(ns)
    )
}

/// `removed` events, one per job in the rows `from` (an SQL source with columns `id`,
/// `queue`, `task`, `attempt`), in namespace `ns`, at `at` (SQL), when `when` (SQL) holds.
pub(crate) fn removed_sql(ns: &str, from: &str, at: &str, when: &str) -> String {
    format!(
        "INSERT INTO {{S}}.events (ns, kind, job_id, queue, task, attempt, at_ms) \
         SELECT {ns}, 'removed', id, queue, task, attempt, {at} FROM {from} WHERE {when} AND {}",
        events_on(ns)
    )
}
