-- flexiq schema, version 10. Flows and dedup modes (see flexiq_core::flow and ::dedup).
--
-- Each dependency edge carries the failure policy of its dependency (EdgePolicy::code): what
-- the dependency failing for good does to the job waiting on it. Edges written before this
-- version are plain depends_on edges, code 0 (the dependent is cancelled), the meaning they
-- always had.
ALTER TABLE {S}.job_deps ADD COLUMN policy smallint NOT NULL DEFAULT 0;

-- A dedup key per namespace names the job holding it, that job's queue, and when the hold
-- lapses by itself (Unix ms; NULL holds while the job is unfinished). Enqueue reads and
-- writes a key under a transaction-scoped advisory lock on it; removing a job drops the keys
-- it holds, found through the (namespace, job_id) index.
CREATE TABLE {S}.dedup_keys (
    namespace text NOT NULL,
    key text NOT NULL,
    job_id uuid NOT NULL,
    queue text NOT NULL,
    expires_at bigint,
    PRIMARY KEY (namespace, key)
);
CREATE INDEX dedup_keys_job ON {S}.dedup_keys (namespace, job_id);
