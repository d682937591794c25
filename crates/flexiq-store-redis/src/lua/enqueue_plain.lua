-- Inserts a batch of plain jobs: no unique keys, no dependencies, no admission cap, no dead
-- letter consumed. The client formats the index members and groups them per key (see
-- `enqueue_plain.rs`), so the script only checks revoked tasks (a revoked one refuses the whole
-- batch before any write, with `FLEXIQ_REVOKED <task>` as `enqueue.lua`) and ids (one the store
-- already holds refuses it with `FLEXIQ_CONFLICT` naming the id, as `enqueue.lua`; the check is
-- one `EXISTS` per thousand jobs) and applies the writes: per job
-- one `HSET` of its values under their field names, per index key one `ZADD` per chunk of
-- members, per queue one pending-count increment (joining the queue set when the count rises
-- from zero, as `enqueue.lua` does), the wake-up tokens, and per job its `enqueued` event
-- (`events.lua`'s `ev_change`, the data `enqueue.lua` writes).
-- It runs with the generated status header (`ST`) and `events.lua` but without the prelude;
-- every key is built from KEYS[1], the namespace base, the one declared key, and so shares its
-- Cluster slot.
-- ARGV: now, ntasks, task ..., njobs, per job (id, queue, task, payload,
-- priority, max_retries, backoff_base, backoff_max, run_at, nextra, field, value ...),
-- nindexes, per index (key suffix, scored ('0' / '1'), n, then n members, or n score-member
-- pairs when scored) ..., nqueues, (queue, count) ..., nwake, (score, member) ...
local B = KEYS[1]
local EXISTS_CHUNK = 1000
local PENDING = tostring(ST.pending)
local at = ARGV[1]
local i = 2
local ntasks = tonumber(ARGV[i])
i = i + 1
if ntasks > 0 and redis.call('SCARD', B .. ':revoked') > 0 then
  for k = 0, ntasks - 1 do
    local t = ARGV[i + k]
    if redis.call('SISMEMBER', B .. ':revoked', t) == 1 then
      return redis.error_reply('FLEXIQ_REVOKED ' .. t)
    end
  end
end
i = i + ntasks
local njobs = tonumber(ARGV[i])
i = i + 1
-- Refuses the batch before any write when a job's id is held (core refuses an id given twice).
local function held(keys, n)
  if n > 0 and redis.call('EXISTS', unpack(keys, 1, n)) > 0 then
    for k = 1, n do
      if redis.call('EXISTS', keys[k]) == 1 then return string.sub(keys[k], #B + 4) end
    end
  end
end
local keys, nkeys, at_job = {}, 0, i
for _ = 1, njobs do
  nkeys = nkeys + 1
  keys[nkeys] = B .. ':j:' .. ARGV[at_job]
  if nkeys == EXISTS_CHUNK then
    local taken = held(keys, nkeys)
    if taken then return redis.error_reply('FLEXIQ_CONFLICT job ' .. taken .. ' already exists') end
    nkeys = 0
  end
  at_job = at_job + 10 + 2 * tonumber(ARGV[at_job + 9])
end
local taken = held(keys, nkeys)
if taken then return redis.error_reply('FLEXIQ_CONFLICT job ' .. taken .. ' already exists') end
for _ = 1, njobs do
  local nextra = tonumber(ARGV[i + 9])
  -- Most jobs carry no optional field: their values go to `HSET` as they are, without a
  -- field list built and unpacked (about 1 µs of Lua per job).
  if nextra == 0 then
    redis.call('HSET', B .. ':j:' .. ARGV[i], 'q', ARGV[i + 1], 't', ARGV[i + 2], 'p', ARGV[i + 3],
      'pr', ARGV[i + 4], 'st', PENDING, 'a', '0', 'mr', ARGV[i + 5], 'bb', ARGV[i + 6], 'bm', ARGV[i + 7],
      'c', at, 'r', ARGV[i + 8], 'v', '1')
  else
    local f = { 'q', ARGV[i + 1], 't', ARGV[i + 2], 'p', ARGV[i + 3], 'pr', ARGV[i + 4], 'st', PENDING, 'a', '0',
      'mr', ARGV[i + 5], 'bb', ARGV[i + 6], 'bm', ARGV[i + 7], 'c', at, 'r', ARGV[i + 8], 'v', '1' }
    for k = 1, 2 * nextra do
      f[24 + k] = ARGV[i + 9 + k]
    end
    redis.call('HSET', B .. ':j:' .. ARGV[i], unpack(f))
  end
  if ev_on() then
    ev_change(ARGV[i], ARGV[i + 1], ARGV[i + 2], nil, ST.pending, 0, 0, false, at, { run_at = ARGV[i + 8] })
  end
  i = i + 10 + 2 * nextra
end
local nindexes = tonumber(ARGV[i])
i = i + 1
for _ = 1, nindexes do
  local key, scored, nm = B .. ':' .. ARGV[i], ARGV[i + 1] == '1', tonumber(ARGV[i + 2])
  i = i + 3
  if scored then
    redis.call('ZADD', key, unpack(ARGV, i, i + 2 * nm - 1))
    i = i + 2 * nm
  elseif nm == 1 then
    -- A single job's index member: no score list to build.
    redis.call('ZADD', key, '0', ARGV[i])
    i = i + 1
  else
    local args = {}
    for k = 0, nm - 1 do
      args[2 * k + 1] = '0'
      args[2 * k + 2] = ARGV[i + k]
    end
    redis.call('ZADD', key, unpack(args))
    i = i + nm
  end
end
local nqueues = tonumber(ARGV[i])
i = i + 1
for _ = 1, nqueues do
  local q = ARGV[i]
  if redis.call('HINCRBY', B .. ':cnt:' .. q, PENDING, ARGV[i + 1]) == tonumber(ARGV[i + 1]) then
    redis.call('SADD', B .. ':queues', q)
  end
  i = i + 2
end
local nwake = tonumber(ARGV[i])
if nwake > 0 then
  redis.call('ZADD', B .. ':wake', unpack(ARGV, i + 1, i + 2 * nwake))
end
return njobs
