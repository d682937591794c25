-- flexiq schema, version 3. The earliest due job is found through the claim index (a loose
-- index scan over each queue's priorities, see waits.rs), so pending jobs no longer carry an
-- entry in an index on run_at alone.
DROP INDEX IF EXISTS {S}.jobs_due;
