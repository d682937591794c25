-- flexiq schema, version 11. Job schedulers (see flexiq_core::schedule).
--
-- One row per scheduler of a namespace: its rule and job template as one JSON document
-- (SchedulerSpec::to_json), where it stands (its next slot, NULL once the rule has none left;
-- the newest slot it fired; how many it fired) and when it was created and last upserted, all
-- times in Unix ms. Ids compare bytewise (COLLATE "C"), so listings page in the order the
-- other stores use. The leader's due scan reads (namespace, next_run_ms, id) in slot order; a
-- scheduler with no slot left is never due, so it is left out of that index.
CREATE TABLE {S}.job_schedulers (
    namespace text NOT NULL,
    id text COLLATE "C" NOT NULL,
    spec text NOT NULL,
    next_run_ms bigint,
    last_run_ms bigint,
    iterations bigint NOT NULL DEFAULT 0,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (namespace, id)
);
CREATE INDEX job_schedulers_due ON {S}.job_schedulers (namespace, next_run_ms, id)
    WHERE next_run_ms IS NOT NULL;
