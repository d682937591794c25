-- flexiq schema, version 4. A fence is (attempt, started_at, claim_seq): requeue, defer and
-- suspend give the attempt back, so a re-claim inside the same millisecond would stamp the
-- same (attempt, started_at) as the claim before it. claim_seq counts every claim of the job
-- and is never given back. Existing rows start from their attempt: each attempt so far was
-- at least one claim, so a running job's fence read back after the upgrade still acks.
ALTER TABLE {S}.jobs ADD COLUMN claim_seq bigint NOT NULL DEFAULT 0;
UPDATE {S}.jobs SET claim_seq = attempt WHERE attempt <> 0;
ALTER TABLE {S}.archived_jobs ADD COLUMN claim_seq bigint NOT NULL DEFAULT 0;
UPDATE {S}.archived_jobs SET claim_seq = attempt WHERE attempt <> 0;
