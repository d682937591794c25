-- flexiq schema, version 8. The admin operations (clean, retry_jobs, obliterate, remove; see
-- admin.rs and remove.rs) find a queue's jobs of one status in age order, and remove a job's
-- metric rows and dead-letter entry with it, without reading whole tables.
--
-- A queue's finished jobs (by status, oldest finished first) and its waiting ones: pending,
-- suspended and running jobs already have a per-queue index (jobs_claim, jobs_running), so
-- only a job that finishes (or is enqueued waiting) pays for one more index entry.
CREATE INDEX jobs_queue_finished_waiting ON {S}.jobs (namespace, queue, status, finished_at, id)
    WHERE status IN (2, 3, 4, 5, 7);
-- A removed job's metric rows, and a removed queue's: one index on the metric table serves both.
CREATE INDEX task_metrics_job ON {S}.task_metrics (namespace, queue, job_id);
-- A removed job's dead-letter entry, and a removed queue's entries (dead letters are rare, so
-- two small indexes: an entry keeps the queue the job died in, which an upsert may change).
CREATE INDEX dead_letters_job ON {S}.dead_letters (original_job_id);
CREATE INDEX dead_letters_queue ON {S}.dead_letters (namespace, queue);
-- A removed queue's archived copies.
CREATE INDEX archived_jobs_queue ON {S}.archived_jobs (namespace, queue);
