-- The claim step, shared by `claim.lua` and the fair claim of `workflow.lua` so that a job is
-- claimed the same way whichever script takes it: due delayed jobs promoted, a queue's
-- concurrency cap and token bucket honoured, and the status change of
-- `flexiq_core::transition(Event::Claim)`: running, attempt + 1, claim sequence + 1 (a hash
-- without `cs` counts from its attempt, as `codec::claim_seq` reads it), started_at and the
-- heartbeat now, the worker set, with every index, counter and the lease set moved, and the
-- claim's event (`active`, named by `ev_change` from the fields already read).
-- The running status code as stored (hash fields and index keys are strings); a claim reads
-- every field of JOB_FIELDS and then the row version, and `AT` names the positions. A
-- library's top level may call no function, so the first call builds them and later calls
-- keep them.
local RUNNING, CLAIM_READ, AT
-- A claim event's data values, refilled for each job (`ev_change` reads them at once); a new
-- table for every call.
local TAKE_EV
local function take_begin()
  if not AT then
    RUNNING = tostring(ST.running)
    CLAIM_READ = { unpack(JOB_FIELDS) }
    CLAIM_READ[#CLAIM_READ + 1] = 'v'
    AT = {}
    for k, name in ipairs(CLAIM_READ) do AT[name] = k end
  end
  TAKE_EV = {}
end

-- Moves the due delayed jobs of queue `q` (at most 1,000 per call) into its ready set.
local function promote(q, now)
  local dy = B .. ':dy:' .. q
  local due = redis.call('ZRANGE', dy, '-inf', now, 'BYSCORE', 'LIMIT', 0, 1000)
  if #due > 0 then
    local rd = B .. ':rd:' .. q
    for _, id in ipairs(due) do
      local f = redis.call('HMGET', B .. ':j:' .. id, 'pr', 'r')
      if f[2] then redis.call('ZADD', rd, -tonumber(f[1]), rmem(tonumber(f[2]), id)) end
    end
    redis.call('ZREM', dy, unpack(due))
  end
end

-- Queue `q`'s token bucket for a limit of `count` claims per `per` ms, refilled up to `now`
-- (a queue without a stored bucket starts full): `tokens` (fractional), `ts` and `used` (none
-- yet), as `save_buckets` writes it back. The one limiter arithmetic: claims and
-- `admin.lua`'s wait until the next claim both read it.
local function refill(q, count, per, now)
  local bk = redis.call('HMGET', B .. ':rb:' .. q, 'tk', 'ts')
  local tokens, ts = tonumber(bk[1] or count), tonumber(bk[2] or now)
  tokens = math.min(count, tokens + math.max(now - ts, 0) * count / per)
  return { tokens = tokens, ts = math.max(ts, now), used = 0 }
end

-- How many jobs queue `q` may start now, at most `limit`: its concurrency cap less its running
-- jobs, and the whole tokens of its rate bucket, refilled up to `now` and kept in `buckets` for
-- `save_buckets`.
local function allowance(q, limit, now, buckets)
  local allow = limit
  local cfg = redis.call('HMGET', B .. ':qc:' .. q, 'conc', 'rc', 'rp')
  if cfg[1] then
    local running = tonumber(redis.call('HGET', B .. ':cnt:' .. q, RUNNING) or '0')
    allow = math.min(allow, tonumber(cfg[1]) - running)
  end
  if cfg[2] and allow > 0 then
    local bucket = refill(q, tonumber(cfg[2]), tonumber(cfg[3]), now)
    buckets[q] = bucket
    allow = math.min(allow, math.floor(bucket.tokens))
  end
  return allow
end

-- Claims job `id`, found in queue `q`'s ready set as member `m`, for `worker` at `at` (the
-- claim time as its decimal string). The member leaves the ready set either way. Returns the
-- job's fields in JOB_FIELDS order with the claim applied (so the reply needs no second read
-- and carries no field names), or nil when the job is no longer claimable.
local function take(id, q, m, worker, at, buckets)
  local key = B .. ':j:' .. id
  local f = redis.call('HMGET', key, unpack(CLAIM_READ))
  local st = f[AT.st]
  acc('ZREM', B .. ':rd:' .. q, m)
  if not CLAIMABLE[tonumber(st)] then return nil end
  local a = string.format('%d', (tonumber(f[AT.a]) or 0) + 1)
  local cs = string.format('%d', (tonumber(f[AT.cs]) or tonumber(f[AT.a]) or 0) + 1)
  local ver = string.format('%d', (tonumber(f[AT.v]) or 0) + 1)
  redis.call('HSET', key, 'st', RUNNING, 'sa', at, 'hb', at, 'w', worker, 'a', a, 'cs', cs, 'v', ver)
  local jq, jt = f[AT.q], f[AT.t]
  local im = pads(f[AT.c]) .. '|' .. id
  acc('ZREM', B .. ':ix:s:' .. st, im)
  acc('ZADD', B .. ':ix:s:' .. RUNNING, '0', im)
  acc('ZREM', ix_sq(st, jq), im)
  acc('ZADD', ix_sq(RUNNING, jq), '0', im)
  acc('ZREM', ix_st(st, jt), im)
  acc('ZADD', ix_st(RUNNING, jt), '0', im)
  acc('ZADD', B .. ':hb', at, id)
  local cnt = B .. ':cnt:' .. jq
  delta(cnt, st, -1)
  delta(cnt, RUNNING, 1)
  if buckets[q] then buckets[q].used = buckets[q].used + 1 end
  if ev_on() then
    local res, v = f[AT.res], TAKE_EV
    v.run_at, v.error = f[AT.r], f[AT.e]
    v.worker_id = worker ~= '' and worker or nil
    v.result_size = res and #res or 0
    ev_change(id, jq, jt, tonumber(st), ST.running, tonumber(f[AT.a]) or 0, tonumber(a), false, at, v)
  end
  f[AT.st], f[AT.a], f[AT.sa], f[AT.hb], f[AT.w], f[AT.cs], f[AT.v] = RUNNING, a, at, at, worker, cs, nil
  return f
end

-- Writes back the token buckets `allowance` refilled, less the tokens the claims used.
local function save_buckets(buckets)
  for q, b in pairs(buckets) do
    redis.call('HSET', B .. ':rb:' .. q, 'tk', b.tokens - b.used, 'ts', b.ts)
  end
end
