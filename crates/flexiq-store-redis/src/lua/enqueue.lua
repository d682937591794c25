-- Inserts a batch of jobs atomically: revoked tasks, unique keys, (workflow run, stage) pairs,
-- dependencies and the admission cap are all checked before anything is written. A pair that
-- already has a job, live or earlier in the batch, refuses the batch with `FLEXIQ_CONFLICT`
-- naming the run, the stage and that job (replacing it is `workflow.lua`'s upsert). A revoked task refuses the whole
-- batch with `FLEXIQ_REVOKED <task>` (`error.rs` makes it `TaskRevoked`).
-- Where a job with dependencies starts is decided in Rust (`flexiq_core::start`): the script
-- reads the dependencies' statuses, atomically with the insert, and applies `DEP`, Rust's verdict
-- per status code, as `starting` folds it. A failed dependency ('f'; the first in order is
-- named): the job is inserted waiting and cancelled at once, as `Event::DependencyFailed` cancels
-- a waiting job. Else an open one ('o'): it waits. Else it is pending.
-- ARGV: now, max_pending ('' for none), dead_id ('' or the dead-letter entry this batch
-- consumes), dead_member, dead_task, njobs, then per job: id, queue, task, payload, priority,
-- run_at, max_retries, backoff_base, backoff_max, nextra, k, v, ... (extra fields: to, u, m,
-- d (comma-separated dependency ids), g, wr, ws, wv).
local now = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local dead_id = ARGV[3]
local njobs = tonumber(ARGV[6])
local jobs = {}
local i = 7
for _ = 1, njobs do
  local j = { id = ARGV[i], q = ARGV[i + 1], t = ARGV[i + 2], p = ARGV[i + 3], pr = tonumber(ARGV[i + 4]),
    r = tonumber(ARGV[i + 5]), mr = ARGV[i + 6], bb = ARGV[i + 7], bm = ARGV[i + 8], at = i }
  local nextra = tonumber(ARGV[i + 9])
  j.extra_at = i + 10
  j.nextra = nextra
  for k = 0, nextra - 1 do
    local name = ARGV[i + 10 + 2 * k]
    if name == 'u' or name == 'd' or name == 'wr' or name == 'ws' then j[name] = ARGV[i + 11 + 2 * k] end
  end
  i = i + 10 + 2 * nextra
  jobs[#jobs + 1] = j
end

if redis.call('SCARD', B .. ':revoked') > 0 then
  for _, j in ipairs(jobs) do
    if redis.call('SISMEMBER', B .. ':revoked', j.t) == 1 then
      return redis.error_reply('FLEXIQ_REVOKED ' .. j.t)
    end
  end
end

local batch = {}      -- id -> job of this batch that will be created
local uniq = {}       -- unique key -> id decided in this batch
local adds = {}       -- queue -> new pending jobs
local pairs_seen = {} -- run .. NUL .. stage -> id of this batch's job for that pair
for _, j in ipairs(jobs) do
  if j.u then
    local existing = uniq[j.u]
    if not existing then
      local held = redis.call('HGET', B .. ':uniq', j.u)
      if held then
        local st = tonumber(redis.call('HGET', B .. ':j:' .. held, 'st'))
        if st and not TERMINAL[st] then existing = held end
      end
    end
    if existing then
      j.dup = existing
    else
      uniq[j.u] = j.id
    end
  end
  if not j.dup and j.wr and j.ws then
    local pair = j.wr .. '\0' .. j.ws
    local held = pairs_seen[pair]
    if not held then
      held = redis.call('HGET', B .. ':wfs:' .. j.wr, j.ws)
      if held and redis.call('EXISTS', B .. ':j:' .. held) == 0 then held = nil end
    end
    if held then
      return redis.error_reply('FLEXIQ_CONFLICT stage ' .. j.ws .. ' of run ' .. j.wr .. ' already has job ' .. held)
    end
    pairs_seen[pair] = j.id
  end
  if not j.dup then
    j.st = ST.pending
    if j.d and j.d ~= '' then
      local open, failed = false, nil
      for dep in string.gmatch(j.d, '[^,]+') do
        local dst
        if batch[dep] then
          dst = batch[dep].st
        else
          dst = tonumber(redis.call('HGET', B .. ':j:' .. dep, 'st'))
          if not dst then dst = tonumber(redis.call('HGET', B .. ':a:' .. dep, 'st')) end
        end
        if not dst then
          return redis.error_reply('FLEXIQ_INVALID dependency ' .. dep .. ' of job ' .. j.id .. ' not found')
        end
        local class = DEP[dst]
        if class == 'f' then
          failed = failed or dep
        elseif class == 'o' then
          open = true
        end
      end
      if failed or open then j.st = ST.waiting end
      if failed then
        -- `Event::DependencyFailed` on the waiting job: cancelled, finished now, the dependency
        -- named in its error (the fields below); its status is what later jobs of the batch
        -- depending on it read.
        j.st = ST.cancelled
        j.fail = failed
      end
    end
    if j.st == ST.pending then adds[j.q] = (adds[j.q] or 0) + 1 end
    batch[j.id] = j
  end
end

if cap then
  for q, n in pairs(adds) do
    local pending = tonumber(redis.call('HGET', B .. ':cnt:' .. q, ST.pending) or '0')
    if pending + n > cap then
      return redis.error_reply('FLEXIQ_FULL ' .. pending .. ' ' .. cap .. ' ' .. q)
    end
  end
end

if dead_id ~= '' then
  if redis.call('HDEL', B .. ':dlq', dead_id) == 0 then
    return redis.error_reply('FLEXIQ_NOTFOUND dead letter ' .. dead_id .. ' not found')
  end
  redis.call('HDEL', B .. ':dlqt', dead_id)
  redis.call('HDEL', B .. ':dlqm', dead_id)
  redis.call('ZREM', B .. ':dlix', ARGV[4])
  redis.call('ZREM', B .. ':dlt:' .. ARGV[5], ARGV[4])
end

local out = {}
local at = ARGV[1]
local created = pad(now)
local queues = {}
local fresh, fresh_order = {}, {}
local pending = B .. ':ix:s:' .. ST.pending
for _, j in ipairs(jobs) do
  if j.dup then
    out[#out + 1] = j.dup
    out[#out + 1] = 0
  else
    local key = B .. ':j:' .. j.id
    local f = { 'q', j.q, 't', j.t, 'p', j.p, 'pr', ARGV[j.at + 4], 'st', string.format('%d', j.st), 'a', '0',
      'mr', j.mr, 'bb', j.bb, 'bm', j.bm, 'c', at, 'r', ARGV[j.at + 5], 'v', '1' }
    for k = 0, j.nextra - 1 do
      f[#f + 1] = ARGV[j.extra_at + 2 * k]
      f[#f + 1] = ARGV[j.extra_at + 2 * k + 1]
    end
    if j.fail then
      f[#f + 1] = 'f'
      f[#f + 1] = at
      f[#f + 1] = 'e'
      f[#f + 1] = 'dependency ' .. j.fail .. ' did not complete'
    end
    redis.call('HSET', key, unpack(f))
    local m = created .. '|' .. j.id
    acc('ZADD', B .. ':ix:q:' .. j.q, '0', m)
    acc('ZADD', B .. ':ix:t:' .. j.t, '0', m)
    if j.u and not j.fail then redis.call('HSET', B .. ':uniq', j.u, j.id) end
    run_add(j.id, j.wr, j.ws, at)
    if j.d and j.d ~= '' then
      for dep in string.gmatch(j.d, '[^,]+') do
        acc('SADD', B .. ':dep:' .. dep, j.id)
      end
    end
    if j.st == ST.pending then
      -- The common case, written directly: a new pending job, ready or delayed.
      if j.r <= now then
        acc('ZADD', B .. ':rd:' .. j.q, string.format('%d', -j.pr), rmem(j.r, j.id))
        if #WAKE < 64 then WAKE[#WAKE + 1] = j.id end
      else
        acc('ZADD', B .. ':dy:' .. j.q, ARGV[j.at + 5], j.id)
      end
      acc('ZADD', pending, '0', m)
      acc('ZADD', ix_sq(ST.pending, j.q), '0', m)
      acc('ZADD', ix_st(ST.pending, j.t), '0', m)
      if not fresh[j.q] then
        fresh[j.q] = 0
        fresh_order[#fresh_order + 1] = j.q
      end
      fresh[j.q] = fresh[j.q] + 1
    else
      if not queues[j.q] then
        queues[j.q] = true
        acc('SADD', B .. ':queues', j.q)
      end
      reindex(j.id, {}, { st = j.st, q = j.q, t = j.t, c = now, r = j.r, pr = j.pr, f = j.fail and now or nil }, now)
    end
    out[#out + 1] = j.id
    out[#out + 1] = 1
  end
end
flush()
-- New pending jobs are counted here rather than through `delta`: a queue joins the queue set
-- when its pending count rises from zero. A queue never leaves that set, and a job never changes
-- queue, so any queue with a pending job already joined it when its first job was counted.
for _, q in ipairs(fresh_order) do
  local n = fresh[q]
  if redis.call('HINCRBY', B .. ':cnt:' .. q, ST.pending, n) == n and not queues[q] then
    redis.call('SADD', B .. ':queues', q)
  end
end
wake(now)
return out
