-- flexiq schema, version 12. The events stream (see events.rs). The placeholders for the kind of
-- a change and its data are filled from core's rules when the migration runs (event_rules.rs).
--
-- Status changes are written by statement-level triggers on jobs from their transition
-- tables, one INSERT per statement however many rows it changed, so no write path can forget
-- one and a batched claim or ack pays one statement. Each row keeps the id of the transaction
-- that wrote it (xid): readers order by (xid, id) and only return rows below the oldest
-- transaction still running that may write here, so an event cannot appear behind one already
-- read. Deleting a job writes nothing here: removals by an operator write their own events,
-- while archiving and retention are silent. A namespace listed in events_off writes none.
--
-- Ids need only be unique and rising within a transaction, so backends take them from the
-- sequence a thousand at a time instead of locking its page for every row.
CREATE TABLE {S}.events (
    id bigint GENERATED ALWAYS AS IDENTITY (CACHE 1000),
    ns text NOT NULL,
    xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    kind text NOT NULL,
    -- A custom event's own name; NULL for built-in kinds, whose name is the kind.
    name text,
    job_id uuid,
    queue text,
    task text,
    attempt integer,
    at_ms bigint NOT NULL,
    data jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX events_order ON {S}.events (ns, xid, id);

CREATE TABLE {S}.events_off (
    ns text PRIMARY KEY
);

-- A new row is always enqueued, whatever status it starts in. The functions run without JIT:
-- the planner knows nothing of a transition table's contents, overestimates the join of large
-- ones by orders of magnitude, and would compile a statement that takes milliseconds.
CREATE FUNCTION {S}.events_insert() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
DECLARE
    now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
    INSERT INTO {S}.events (ns, kind, job_id, queue, task, attempt, at_ms, data)
    SELECT c.ns, c.kind, c.id, c.queue, c.task, c.attempt, now_ms, {EVENT_DATA}
    FROM (SELECT n.namespace AS ns, 'enqueued'::text AS kind, n.id, n.queue, n.task, n.attempt, n.status,
                 n.run_at, n.worker_id, coalesce(octet_length(n.result), 0) AS result_size, n.last_error AS error
          FROM new_rows n
          WHERE n.namespace <> ALL (ARRAY(SELECT ns FROM {S}.events_off))) AS c;
    RETURN NULL;
END $$;

-- The status events of the rows whose status changed, then the progress events of the rows
-- that reported a new progress. Only rows holding a progress can have reported one, so the
-- second join runs only for statements that touch such rows.
CREATE FUNCTION {S}.events_update() RETURNS trigger LANGUAGE plpgsql SET jit = off AS $$
DECLARE
    now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
    INSERT INTO {S}.events (ns, kind, job_id, queue, task, attempt, at_ms, data)
    SELECT c.ns, c.kind, c.id, c.queue, c.task, c.attempt, now_ms, {EVENT_DATA}
    FROM (SELECT n.namespace AS ns, {EVENT_KIND} AS kind, n.id, n.queue, n.task, n.attempt, n.status,
                 n.run_at, n.worker_id, coalesce(octet_length(n.result), 0) AS result_size, n.last_error AS error
          FROM new_rows n JOIN old_rows o ON o.id = n.id
          WHERE n.status <> o.status
            AND n.namespace <> ALL (ARRAY(SELECT ns FROM {S}.events_off))) AS c;
    IF EXISTS (SELECT 1 FROM new_rows WHERE progress IS NOT NULL) THEN
        INSERT INTO {S}.events (ns, kind, job_id, queue, task, attempt, at_ms, data)
        SELECT n.namespace, 'progress', n.id, n.queue, n.task, n.attempt, now_ms,
               jsonb_build_object('progress', n.progress)
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE n.progress IS DISTINCT FROM o.progress AND n.progress IS NOT NULL
          AND n.namespace <> ALL (ARRAY(SELECT ns FROM {S}.events_off));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER events_insert AFTER INSERT ON {S}.jobs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {S}.events_insert();
CREATE TRIGGER events_update AFTER UPDATE ON {S}.jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {S}.events_update();
