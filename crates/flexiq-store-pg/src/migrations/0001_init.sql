-- flexiq schema, version 1. {S} is the configured schema.
CREATE TABLE {S}.meta (
    key text PRIMARY KEY,
    value bigint NOT NULL
);
INSERT INTO {S}.meta (key, value) VALUES ('contract_floor', 1);

CREATE TABLE {S}.jobs (
    id uuid PRIMARY KEY,
    namespace text NOT NULL,
    queue text NOT NULL,
    task text NOT NULL,
    payload bytea NOT NULL,
    priority integer NOT NULL,
    status smallint NOT NULL,
    attempt integer NOT NULL DEFAULT 0,
    max_retries integer NOT NULL,
    backoff_base_ms bigint NOT NULL,
    backoff_max_ms bigint NOT NULL,
    created_at bigint NOT NULL,
    run_at bigint NOT NULL,
    started_at bigint,
    heartbeat_at bigint,
    finished_at bigint,
    worker_id text,
    result bytea,
    last_error text,
    unique_key text,
    metadata text,
    progress double precision,
    timeout_ms bigint,
    cancel_requested boolean NOT NULL DEFAULT false,
    depends_on uuid[] NOT NULL DEFAULT '{}',
    has_dependents boolean NOT NULL DEFAULT false,
    group_key text,
    workflow_run_id text,
    workflow_stage_id text
);
-- Status codes: 0 pending, 1 running, 2 completed, 3 failed, 4 dead, 5 cancelled,
-- 6 suspended, 7 waiting. Partial indexes per status keep hot paths small.
CREATE INDEX jobs_claim ON {S}.jobs (namespace, queue, priority DESC, run_at, id) INCLUDE (status)
    WHERE status IN (0, 6);
CREATE INDEX jobs_due ON {S}.jobs (namespace, run_at) WHERE status IN (0, 6);
CREATE INDEX jobs_running ON {S}.jobs (namespace, queue, started_at) WHERE status = 1;
CREATE INDEX jobs_finished ON {S}.jobs (namespace, finished_at) WHERE status IN (2, 3, 4, 5);
CREATE INDEX jobs_created ON {S}.jobs (namespace, created_at, id);
CREATE INDEX jobs_created_pending ON {S}.jobs (namespace, created_at, id) WHERE status = 0;
CREATE INDEX jobs_created_running ON {S}.jobs (namespace, created_at, id) WHERE status = 1;
CREATE INDEX jobs_created_completed ON {S}.jobs (namespace, created_at, id) WHERE status = 2;
CREATE INDEX jobs_created_failed ON {S}.jobs (namespace, created_at, id) WHERE status = 3;
CREATE INDEX jobs_created_dead ON {S}.jobs (namespace, created_at, id) WHERE status = 4;
CREATE INDEX jobs_created_cancelled ON {S}.jobs (namespace, created_at, id) WHERE status = 5;
CREATE INDEX jobs_created_suspended ON {S}.jobs (namespace, created_at, id) WHERE status = 6;
CREATE INDEX jobs_created_waiting ON {S}.jobs (namespace, created_at, id) WHERE status = 7;
CREATE UNIQUE INDEX jobs_unique_live ON {S}.jobs (namespace, unique_key)
    WHERE unique_key IS NOT NULL AND status IN (0, 1, 6, 7);
CREATE INDEX jobs_workflow_run ON {S}.jobs (namespace, workflow_run_id) WHERE workflow_run_id IS NOT NULL;

CREATE TABLE {S}.job_deps (
    depends_on uuid NOT NULL,
    job_id uuid NOT NULL,
    namespace text NOT NULL,
    PRIMARY KEY (depends_on, job_id)
);
CREATE INDEX job_deps_job ON {S}.job_deps (job_id);

CREATE TABLE {S}.archived_jobs (LIKE {S}.jobs INCLUDING DEFAULTS);
ALTER TABLE {S}.archived_jobs ADD COLUMN archived_at bigint NOT NULL DEFAULT 0;
ALTER TABLE {S}.archived_jobs ADD PRIMARY KEY (id);
CREATE INDEX archived_jobs_finished ON {S}.archived_jobs (namespace, finished_at, id);
CREATE INDEX archived_jobs_archived ON {S}.archived_jobs (namespace, archived_at);

CREATE TABLE {S}.job_errors (
    id uuid PRIMARY KEY,
    namespace text NOT NULL,
    job_id uuid NOT NULL,
    attempt integer NOT NULL,
    error text NOT NULL,
    failed_at bigint NOT NULL
);
CREATE INDEX job_errors_job ON {S}.job_errors (job_id, failed_at, id);
CREATE INDEX job_errors_time ON {S}.job_errors (namespace, failed_at);

CREATE TABLE {S}.dead_letters (
    id uuid PRIMARY KEY,
    namespace text NOT NULL,
    original_job_id uuid NOT NULL,
    queue text NOT NULL,
    task_name text NOT NULL,
    payload bytea NOT NULL,
    error text,
    retry_count integer NOT NULL,
    failed_at bigint NOT NULL,
    metadata text,
    priority integer NOT NULL,
    max_retries integer NOT NULL,
    backoff_base_ms bigint NOT NULL,
    backoff_max_ms bigint NOT NULL,
    timeout_ms bigint,
    group_key text
);
CREATE INDEX dead_letters_time ON {S}.dead_letters (namespace, failed_at, id);
CREATE INDEX dead_letters_task ON {S}.dead_letters (namespace, task_name, failed_at, id);

CREATE TABLE {S}.task_metrics (
    namespace text NOT NULL,
    job_id uuid NOT NULL,
    task text NOT NULL,
    queue text NOT NULL,
    attempt integer NOT NULL,
    success boolean NOT NULL,
    duration_ms bigint NOT NULL,
    recorded_at bigint NOT NULL
);
CREATE INDEX task_metrics_time ON {S}.task_metrics (namespace, recorded_at);

CREATE TABLE {S}.task_logs (
    id uuid PRIMARY KEY,
    namespace text NOT NULL,
    job_id uuid NOT NULL,
    level text NOT NULL,
    message text NOT NULL,
    logged_at bigint NOT NULL
);
CREATE INDEX task_logs_job ON {S}.task_logs (job_id, logged_at, id);
CREATE INDEX task_logs_time ON {S}.task_logs (namespace, logged_at);

CREATE TABLE {S}.job_partials (
    job_id uuid NOT NULL,
    seq bigint NOT NULL,
    data bytea NOT NULL,
    published_at bigint NOT NULL,
    PRIMARY KEY (job_id, seq)
);

CREATE TABLE {S}.replays (
    id uuid PRIMARY KEY,
    namespace text NOT NULL,
    original_job_id uuid NOT NULL,
    replay_job_id uuid NOT NULL,
    replayed_at bigint NOT NULL,
    original_error text
);
CREATE INDEX replays_original ON {S}.replays (original_job_id, replayed_at DESC);

CREATE TABLE {S}.queues (
    namespace text NOT NULL,
    queue text NOT NULL,
    paused boolean NOT NULL DEFAULT false,
    rate_count integer,
    rate_per_ms bigint,
    tokens double precision,
    tokens_at bigint,
    concurrency integer,
    PRIMARY KEY (namespace, queue)
);

CREATE TABLE {S}.revoked_tasks (
    namespace text NOT NULL,
    task text NOT NULL,
    PRIMARY KEY (namespace, task)
);

CREATE TABLE {S}.settings (
    key text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE {S}.leases (
    namespace text NOT NULL,
    name text NOT NULL,
    holder text NOT NULL,
    expires_at bigint NOT NULL,
    PRIMARY KEY (namespace, name)
);

CREATE TABLE {S}.workers (
    namespace text NOT NULL,
    id text NOT NULL,
    queues text[] NOT NULL,
    concurrency integer NOT NULL,
    host text NOT NULL,
    pid bigint NOT NULL,
    started_at bigint NOT NULL,
    heartbeat_at bigint NOT NULL,
    PRIMARY KEY (namespace, id)
);

CREATE TABLE {S}.effective_retention (
    namespace text PRIMARY KEY,
    enabled boolean NOT NULL,
    defaulted boolean NOT NULL,
    reported_at bigint NOT NULL,
    archived_jobs_ms bigint,
    dead_letter_ms bigint,
    task_logs_ms bigint,
    task_metrics_ms bigint,
    job_errors_ms bigint
);
