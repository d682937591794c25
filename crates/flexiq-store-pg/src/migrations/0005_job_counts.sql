-- flexiq schema, version 5. Job counts per (namespace, queue, status), so stats cost O(queues)
-- instead of a count over the jobs table. Statement-level triggers keep them in the same
-- transaction as every insert, delete and status change of a job row, whatever statement made
-- it (each statement adds one aggregated delta per (queue, status) it touched, from its
-- transition tables). Deltas go to the writing backend's own row (slot = its pid), so
-- concurrent claimers and ackers never wait on each other's counter rows; rows of backends
-- that have gone are folded into slot 0 by maintenance (see counts.rs). A count is the sum
-- over slots.
CREATE TABLE {S}.job_counts (
    namespace text NOT NULL,
    queue text NOT NULL,
    status smallint NOT NULL,
    slot integer NOT NULL,
    n bigint NOT NULL,
    PRIMARY KEY (namespace, queue, status, slot)
);

CREATE FUNCTION {S}.job_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {S}.job_counts AS c (namespace, queue, status, slot, n)
    SELECT namespace, queue, status, pg_backend_pid(), count(*) FROM new_rows
    GROUP BY namespace, queue, status ORDER BY namespace, queue, status
    ON CONFLICT (namespace, queue, status, slot) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END $$;

CREATE FUNCTION {S}.job_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {S}.job_counts AS c (namespace, queue, status, slot, n)
    SELECT namespace, queue, status, pg_backend_pid(), -count(*) FROM old_rows
    GROUP BY namespace, queue, status ORDER BY namespace, queue, status
    ON CONFLICT (namespace, queue, status, slot) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END $$;

-- Updates that change no status (heartbeats, progress, flags) add nothing: their +1 and -1
-- cancel out and the HAVING drops them.
CREATE FUNCTION {S}.job_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {S}.job_counts AS c (namespace, queue, status, slot, n)
    SELECT namespace, queue, status, pg_backend_pid(), sum(d) FROM (
        SELECT namespace, queue, status, 1 AS d FROM new_rows
        UNION ALL
        SELECT namespace, queue, status, -1 AS d FROM old_rows) AS m
    GROUP BY namespace, queue, status HAVING sum(d) <> 0 ORDER BY namespace, queue, status
    ON CONFLICT (namespace, queue, status, slot) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END $$;

CREATE FUNCTION {S}.job_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM {S}.job_counts;
    RETURN NULL;
END $$;

-- The triggers lock out writers until this migration commits, so the backfill below counts
-- every row written before it and the triggers count every row written after.
LOCK TABLE {S}.jobs IN SHARE ROW EXCLUSIVE MODE;
CREATE TRIGGER job_counts_insert AFTER INSERT ON {S}.jobs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {S}.job_counts_insert();
CREATE TRIGGER job_counts_delete AFTER DELETE ON {S}.jobs
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION {S}.job_counts_delete();
CREATE TRIGGER job_counts_update AFTER UPDATE ON {S}.jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {S}.job_counts_update();
CREATE TRIGGER job_counts_truncate AFTER TRUNCATE ON {S}.jobs
    FOR EACH STATEMENT EXECUTE FUNCTION {S}.job_counts_truncate();

INSERT INTO {S}.job_counts (namespace, queue, status, slot, n)
SELECT namespace, queue, status, 0, count(*) FROM {S}.jobs GROUP BY namespace, queue, status;
