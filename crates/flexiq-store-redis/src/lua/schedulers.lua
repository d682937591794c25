-- Scheduler writes that must not race a fire or another upsert (`schedulers.rs`). A scheduler
-- is the hash `B:js:<id>` (`spec` JSON, `next_run_ms` (missing: no slot left), `last_run_ms`
-- (missing: none fired), `iterations`, `created_at`, `updated_at`), a member of `B:jsn` scored
-- by its next slot while it has one (the due scan), and a member of `B:jsi` scored 0 (the id
-- listing). Firing is `enqueue.lua`'s guard. It runs with the generated header alone; every key
-- is built from KEYS[1], the namespace base, and so shares its Cluster slot. ARGV[1] names the
-- operation.
local B = KEYS[1]
local op = ARGV[1]
local function set_or_drop(k, field, value)
  if value == '' then
    redis.call('HDEL', k, field)
  else
    redis.call('HSET', k, field, value)
  end
end
if op == 'upsert' then
  -- ARGV: id, whether one was read ('0' / '1'), its next_run_ms, last_run_ms, iterations and
  -- updated_at as read ('' for missing), then the record to write: spec, next_run_ms ('' for
  -- none), last_run_ms ('' for none), iterations, created_at, updated_at. Returns 1 when
  -- written, 0 (writing nothing) when the scheduler is no longer as read.
  local id = ARGV[2]
  local k = B .. ':js:' .. id
  if ARGV[3] == '0' then
    if redis.call('EXISTS', k) == 1 then return 0 end
  else
    local cur = redis.call('HMGET', k, 'spec', 'next_run_ms', 'last_run_ms', 'iterations', 'updated_at')
    if not cur[1] then return 0 end
    for f = 2, 5 do
      if (cur[f] or '') ~= ARGV[f + 2] then return 0 end
    end
  end
  redis.call('HSET', k, 'spec', ARGV[8], 'iterations', ARGV[11], 'created_at', ARGV[12], 'updated_at', ARGV[13])
  set_or_drop(k, 'next_run_ms', ARGV[9])
  set_or_drop(k, 'last_run_ms', ARGV[10])
  if ARGV[9] == '' then
    redis.call('ZREM', B .. ':jsn', id)
  else
    redis.call('ZADD', B .. ':jsn', ARGV[9], id)
  end
  redis.call('ZADD', B .. ':jsi', 0, id)
  return 1
elseif op == 'remove' then
  -- ARGV: id. Returns 1 when it existed.
  local id = ARGV[2]
  if redis.call('DEL', B .. ':js:' .. id) == 0 then return 0 end
  redis.call('ZREM', B .. ':jsn', id)
  redis.call('ZREM', B .. ':jsi', id)
  return 1
end
return redis.error_reply('FLEXIQ_INVALID unknown operation ' .. op)
