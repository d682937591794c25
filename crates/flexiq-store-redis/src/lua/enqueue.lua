-- Inserts a batch of jobs atomically: revoked tasks, unique keys, dedup keys, (workflow run,
-- stage) pairs, dependencies and the admission cap are all checked before anything is written.
-- A pair that already has a job, live or earlier in the batch, refuses the batch with
-- `FLEXIQ_CONFLICT` naming the run, the stage and that job (replacing it is `workflow.lua`'s
-- upsert). A revoked task refuses the whole batch with `FLEXIQ_REVOKED <task>` (`error.rs`
-- makes it `TaskRevoked`). A job to be created whose id the store already holds (any status),
-- or that an earlier job of the batch takes, refuses the batch with `FLEXIQ_CONFLICT` naming
-- the id, as a client re-sending a batch after a lost reply makes: the job stays as it was. A
-- flow is such a batch, so its preset node ids are checked the same.
-- Where a job with dependencies starts is the prelude's `standing` over its edges, with the
-- dependencies' statuses read atomically with the insert and folded through the generated
-- verdicts (`DEP`, `ON_FAIL`, `SETTLED`): a failed dependency whose edge ends the job (the
-- first in order is named) has it inserted cancelled (`Event::DependencyFailed`) or failed
-- (`Event::ChildFailed`) at once, as the state machine writes a waiting job given that event;
-- else an open edge keeps it waiting; else it is pending.
-- A job with a dedup key is decided against the key's record (`dedup.lua`) and its holder's
-- status, jobs in batch order, so a later job sees the record an earlier one left: the plan
-- letter Rust sent for that state says insert (the job takes the key), insert behind the
-- running holder (one more edge, on the holder, `EDGE.ignore_dependency`), or ignore (the
-- holder's id is returned, not created), maybe moving the record's expiry and giving the
-- not-yet-started holder this job's payload, priority, run_at, retries, backoff, timeout and
-- metadata (the last such job of the batch wins).
-- Each new job writes its `enqueued` event (one a failed dependency ended writes `enqueued`,
-- status waiting, then its ending event, as the waiting job it stands for); each job absorbed
-- by an existing one (a dedup record or a unique key) writes `deduplicated` on the job kept,
-- naming the key.
-- ARGV: now, max_pending ('' for none), dead_id ('' or the dead-letter entry this batch
-- consumes), dead_member, dead_task, njobs, then per job: id, queue, task, payload, priority,
-- run_at, max_retries, backoff_base, backoff_max, nextra, k, v, ... (extra fields: to, u, m,
-- d (comma-separated dependency ids), dp (their policy codes), g, wr, ws, wv), then the dedup
-- key ('' for none) and, after a key, the job's plan table (`flexiq_core::dedup_table::plan_table`) and the
-- expiry it gives the key ('' for none).
-- A scheduler's fire (`schedulers.rs`) adds after the jobs its guard: the scheduler id, the
-- next slot (Unix ms) it must still hold, its next slot ('' for none), last slot and count
-- after the round, and its next slot should the batch be refused (`plan_skip`); other callers
-- send nothing there. When the stored next slot differs (another leader fired it, an upsert
-- moved it, the scheduler was removed) the script writes nothing and returns 0 (an enqueue
-- otherwise returns an array). Else it moves the next slot (hash and `B:jsn`) to the refused
-- batch's before the checks, so a refused batch (a revoked task) still advances the scheduler
-- past its slots without counting them, and writes the round's next slot, last slot and count
-- with the jobs, only when they are written.
local now = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local dead_id = ARGV[3]
local njobs = tonumber(ARGV[6])
local jobs = {}
local i = 7
-- Fields kept by name rather than written as given: the edges (written as decided) and the
-- options a replacing duplicate may bring.
local NAMED = { d = true, dp = true, to = true, m = true }
for _ = 1, njobs do
  local j = { id = ARGV[i], q = ARGV[i + 1], t = ARGV[i + 2], p = ARGV[i + 3], prs = ARGV[i + 4],
    pr = tonumber(ARGV[i + 4]), rs = ARGV[i + 5], r = tonumber(ARGV[i + 5]), mr = ARGV[i + 6],
    bb = ARGV[i + 7], bm = ARGV[i + 8], extra = {} }
  local nextra = tonumber(ARGV[i + 9])
  for k = 0, nextra - 1 do
    local name, value = ARGV[i + 10 + 2 * k], ARGV[i + 11 + 2 * k]
    if NAMED[name] then
      j[name] = value
    else
      j.extra[#j.extra + 1] = name
      j.extra[#j.extra + 1] = value
      if name == 'u' or name == 'wr' or name == 'ws' then j[name] = value end
    end
  end
  i = i + 10 + 2 * nextra
  j.es = edge_list(j.d, j.dp)
  if ARGV[i] ~= '' then
    j.dk, j.dtbl = ARGV[i], ARGV[i + 1]
    if ARGV[i + 2] ~= '' then j.dexp = tonumber(ARGV[i + 2]) end
    i = i + 3
  else
    i = i + 1
  end
  jobs[#jobs + 1] = j
end

local sched = nil
local function sched_next(id, value)
  local k = B .. ':js:' .. id
  if value == '' then
    redis.call('HDEL', k, 'next_run_ms')
    redis.call('ZREM', B .. ':jsn', id)
  else
    redis.call('HSET', k, 'next_run_ms', value)
    redis.call('ZADD', B .. ':jsn', value, id)
  end
end
if ARGV[i] then
  sched = { id = ARGV[i], k = B .. ':js:' .. ARGV[i], next = ARGV[i + 2], last = ARGV[i + 3], n = ARGV[i + 4] }
  if redis.call('HGET', sched.k, 'next_run_ms') ~= ARGV[i + 1] then return 0 end
  sched_next(sched.id, ARGV[i + 5])
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
local recs = {}       -- dedup key -> its record as the batch leaves it (false: none)
local rec_order, rec_seen = {}, {} -- dedup keys whose record the batch writes, in order
local repl, repl_order = {}, {} -- holder id -> the job whose payload and options it takes
local function rec_dirty(key)
  if not rec_seen[key] then
    rec_seen[key] = true
    rec_order[#rec_order + 1] = key
  end
end
for _, j in ipairs(jobs) do
  if j.dk then
    local rec = recs[j.dk]
    if rec == nil then
      rec = dd_read(j.dk) or false
      recs[j.dk] = rec
    end
    local st, exp = nil, nil
    if rec then
      exp = rec.exp
      local held = batch[rec.jid]
      if held then st = held.st else st = rec.st end
    end
    local plan = dd_plan(j.dtbl, st, exp, now)
    if plan == 'i' or plan == 'b' then
      j.take = true
      if plan == 'b' then j.es[#j.es + 1] = { rec.jid, EDGE.ignore_dependency } end
    else
      j.dup, j.dupkey = rec.jid, j.dk
      if plan == 'e' or plan == 'x' then
        rec.exp = j.dexp
        rec_dirty(j.dk)
      end
      if plan == 'r' or plan == 'x' then
        if not repl[rec.jid] then repl_order[#repl_order + 1] = rec.jid end
        repl[rec.jid] = j
      end
    end
  end
  if not j.dup and j.u then
    local existing = uniq[j.u]
    if not existing then
      local held = redis.call('HGET', B .. ':uniq', j.u)
      if held then
        local st = tonumber(redis.call('HGET', B .. ':j:' .. held, 'st'))
        if st and not TERMINAL[st] then existing = held end
      end
    end
    if existing then
      j.dup, j.dupkey = existing, j.u
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
    if batch[j.id] or redis.call('EXISTS', B .. ':j:' .. j.id) == 1 then
      return redis.error_reply('FLEXIQ_CONFLICT job ' .. j.id .. ' already exists')
    end
    j.st = ST.pending
    if #j.es > 0 then
      local sts = {}
      for _, e in ipairs(j.es) do
        local dep = e[1]
        local dst
        if batch[dep] then dst = batch[dep].st else dst = status_of(dep) end
        if not dst then
          return redis.error_reply('FLEXIQ_INVALID dependency ' .. dep .. ' of job ' .. j.id .. ' not found')
        end
        sts[dep] = dst
      end
      local act, dep, left = standing(j.es, function(d) return sts[d] end)
      j.es = left
      if act == 'w' then
        j.st = ST.waiting
      elseif act == 'c' or act == 'f' then
        -- The event on the waiting job it stands for: cancelled or failed, finished now, the
        -- dependency named in its error (written below); its status and error are what later
        -- jobs of the batch depending on it read.
        j.st = failure_status(act)
        j.fail = dep
        local err = batch[dep] and batch[dep].err
        if act == 'f' and not batch[dep] then err = error_of(dep) end
        j.err = failure_error(act, dep, err)
      end
    end
    if j.st == ST.pending then adds[j.q] = (adds[j.q] or 0) + 1 end
    batch[j.id] = j
    if j.take then
      recs[j.dk] = { jid = j.id, q = j.q, exp = j.dexp }
      rec_dirty(j.dk)
    end
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
    if ev_on() then
      -- The kept job: of this batch (new, attempt 0), live, or archived.
      local held = batch[j.dup]
      local f
      if held then
        f = { held.q, held.t, 0 }
      else
        f = redis.call('HMGET', B .. ':j:' .. j.dup, 'q', 't', 'a')
        if not f[1] then f = redis.call('HMGET', B .. ':a:' .. j.dup, 'q', 't', 'a') end
      end
      ev_add('deduplicated', 'deduplicated', j.dup, f[1] or nil, f[2] or nil, f[3] or nil, at,
        '{"key":' .. cjson.encode(j.dupkey) .. '}')
    end
  else
    local key = B .. ':j:' .. j.id
    -- A later duplicate of the batch may have given it its payload and options.
    local v = repl[j.id] or j
    local f = { 'q', j.q, 't', j.t, 'p', v.p, 'pr', v.prs, 'st', string.format('%d', j.st), 'a', '0',
      'mr', v.mr, 'bb', v.bb, 'bm', v.bm, 'c', at, 'r', v.rs, 'v', '1' }
    for k = 1, #j.extra do f[#f + 1] = j.extra[k] end
    if v.to then
      f[#f + 1] = 'to'
      f[#f + 1] = v.to
    end
    if v.m then
      f[#f + 1] = 'm'
      f[#f + 1] = v.m
    end
    local d, dp = edge_fields(j.es)
    if d then
      f[#f + 1] = 'd'
      f[#f + 1] = d
    end
    if dp then
      f[#f + 1] = 'dp'
      f[#f + 1] = dp
    end
    if j.take then
      f[#f + 1] = 'dk'
      f[#f + 1] = j.dk
    end
    if j.fail then
      f[#f + 1] = 'f'
      f[#f + 1] = at
      f[#f + 1] = 'e'
      f[#f + 1] = j.err
    end
    redis.call('HSET', key, unpack(f))
    local m = created .. '|' .. j.id
    acc('ZADD', B .. ':ix:q:' .. j.q, '0', m)
    acc('ZADD', B .. ':ix:t:' .. j.t, '0', m)
    if j.u and not j.fail then redis.call('HSET', B .. ':uniq', j.u, j.id) end
    run_add(j.id, j.wr, j.ws, at)
    for _, e in ipairs(j.es) do
      acc('SADD', B .. ':dep:' .. e[1], j.id)
    end
    if j.st == ST.pending then
      -- The common case, written directly: a new pending job, ready or delayed.
      if v.r <= now then
        acc('ZADD', B .. ':rd:' .. j.q, string.format('%d', -v.pr), rmem(v.r, j.id))
        if #WAKE < 64 then WAKE[#WAKE + 1] = j.id end
      else
        acc('ZADD', B .. ':dy:' .. j.q, v.rs, j.id)
      end
      acc('ZADD', pending, '0', m)
      acc('ZADD', ix_sq(ST.pending, j.q), '0', m)
      acc('ZADD', ix_st(ST.pending, j.t), '0', m)
      if not fresh[j.q] then
        fresh[j.q] = 0
        fresh_order[#fresh_order + 1] = j.q
      end
      fresh[j.q] = fresh[j.q] + 1
      if ev_on() then ev_change(j.id, j.q, j.t, nil, ST.pending, 0, 0, false, at, { run_at = v.rs }) end
    else
      if not queues[j.q] then
        queues[j.q] = true
        acc('SADD', B .. ':queues', j.q)
      end
      reindex(j.id, {}, { st = j.st, q = j.q, t = j.t, c = now, r = v.r, pr = v.pr, a = 0,
        f = j.fail and now or nil, ended = j.fail ~= nil }, now)
    end
    out[#out + 1] = j.id
    out[#out + 1] = 1
  end
end
-- Holders already stored that a duplicate replaced: the new payload and options, the row
-- version moved (a plan decided on the old row commits nothing) and the job placed anew.
for _, hid in ipairs(repl_order) do
  local v = repl[hid]
  local o = not batch[hid] and load(hid)
  if o then
    local key = B .. ':j:' .. hid
    local set = { 'p', v.p, 'pr', v.prs, 'r', v.rs, 'mr', v.mr, 'bb', v.bb, 'bm', v.bm,
      'v', string.format('%d', (tonumber(o.v) or 0) + 1) }
    local del = {}
    for _, name in ipairs({ 'to', 'm' }) do
      if v[name] then
        set[#set + 1] = name
        set[#set + 1] = v[name]
      else
        del[#del + 1] = name
      end
    end
    redis.call('HSET', key, unpack(set))
    if #del > 0 then redis.call('HDEL', key, unpack(del)) end
    local n = {}
    for k, x in pairs(o) do n[k] = x end
    n.r, n.pr = v.r, v.pr
    reindex(hid, o, n, now)
  end
end
for _, key in ipairs(rec_order) do
  if recs[key] then dd_write(key, recs[key]) end
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
if sched then
  sched_next(sched.id, sched.next)
  redis.call('HSET', sched.k, 'iterations', sched.n)
  if sched.last ~= '' then redis.call('HSET', sched.k, 'last_run_ms', sched.last) end
end
return out
