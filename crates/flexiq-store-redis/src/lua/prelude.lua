-- Shared by every flexiq script. KEYS[1], the one declared key, is the namespace base
-- `{prefix:namespace}`; every key a script touches is built from it, so all share its hash tag
-- and its Cluster slot (Redis Cluster accepts undeclared keys of the declared keys' slot).
-- Status codes are spelled through the generated header before this prelude (`scripts.rs`):
-- `ST.pending` and so on, the `CLAIMABLE` and `TERMINAL` sets, and `DEP`.
local B = KEYS[1]
-- Ids of jobs this script made claimable (the first 64), one wake-up token each.
local WAKE = {}
-- The fields a job is read back from, in the order `codec::JOB_FIELDS` lists them.
local JOB_FIELDS = { 'q', 't', 'p', 'pr', 'st', 'a', 'mr', 'bb', 'bm', 'c', 'r', 'sa', 'hb', 'f', 'w',
  'res', 'e', 'u', 'm', 'pg', 'to', 'cr', 'd', 'g', 'wr', 'ws', 'cs', 'wv' }

local function pad(n) return string.format('%016d', n) end
-- `pad` for a number already held as its decimal string (no float formatting).
local function pads(s)
  if string.byte(s, 1) == 45 then return pad(tonumber(s)) end
  return string.rep('0', 16 - #s) .. s
end
local function rmem(r, id) return pad(r) .. '|' .. id end
-- The combined listing indexes: jobs of one status in one queue, and in one task.
local function ix_sq(st, q) return B .. ':ix:sq:' .. st .. ':' .. q end
local function ix_st(st, t) return B .. ':ix:st:' .. st .. ':' .. t end

-- Index writes are gathered per command and key and sent once per key at the end of a
-- script: members are unique per job, so removals and additions of different jobs commute.
local ACC, ACC_ORDER = { ZREM = {}, ZADD = {}, SADD = {} }, { ZREM = {}, ZADD = {}, SADD = {} }
local DELTA, DELTA_ORDER = {}, {}
local function acc(cmd, key, a, b)
  local by_key = ACC[cmd]
  local args = by_key[key]
  if not args then
    args = {}
    by_key[key] = args
    local order = ACC_ORDER[cmd]
    order[#order + 1] = key
  end
  args[#args + 1] = a
  if b ~= nil then args[#args + 1] = b end
end
local function delta(key, field, d)
  local by_field = DELTA[key]
  if not by_field then
    by_field = {}
    DELTA[key] = by_field
    DELTA_ORDER[#DELTA_ORDER + 1] = key
  end
  field = tostring(field)
  by_field[field] = (by_field[field] or 0) + d
end
local function flush()
  for _, cmd in ipairs({ 'ZREM', 'ZADD', 'SADD' }) do
    local step = cmd == 'ZADD' and 4000 or 2000
    for _, key in ipairs(ACC_ORDER[cmd]) do
      local args = ACC[cmd][key]
      for i = 1, #args, step do
        redis.call(cmd, key, unpack(args, i, math.min(i + step - 1, #args)))
      end
    end
  end
  for _, key in ipairs(DELTA_ORDER) do
    for field, d in pairs(DELTA[key]) do
      if d ~= 0 then redis.call('HINCRBY', key, field, string.format('%d', d)) end
    end
  end
  ACC, ACC_ORDER = { ZREM = {}, ZADD = {}, SADD = {} }, { ZREM = {}, ZADD = {}, SADD = {} }
  DELTA, DELTA_ORDER = {}, {}
end

-- The fields the indexes are derived from.
local function load(id)
  local v = redis.call('HMGET', B .. ':j:' .. id, 'st', 'q', 't', 'c', 'r', 'pr', 'hb', 'sa', 'f', 'u', 'v', 'a')
  if not v[1] then return nil end
  return { st = tonumber(v[1]), q = v[2], t = v[3], c = tonumber(v[4]), r = tonumber(v[5]),
    pr = tonumber(v[6]), hb = tonumber(v[7]), sa = tonumber(v[8]), f = tonumber(v[9]), u = v[10],
    v = v[11], a = tonumber(v[12]) }
end

-- Moves a job between the derived structures after its fields changed from `o` to `n`
-- (`o.st == nil` for a new job): ready / delayed sets, status index and the combined status +
-- queue and status + task indexes, counters, lease set, finished set and the unique-key map. Call `flush()` before the script returns.
local function reindex(id, o, n, now)
  local placed = o.st == n.st and o.r == n.r and o.pr == n.pr
  if not placed and o.st ~= nil and CLAIMABLE[o.st] then
    acc('ZREM', B .. ':rd:' .. o.q, rmem(o.r, id))
    acc('ZREM', B .. ':dy:' .. o.q, id)
  end
  if not placed and CLAIMABLE[n.st] then
    if n.r <= now then
      acc('ZADD', B .. ':rd:' .. n.q, -n.pr, rmem(n.r, id))
      if #WAKE < 64 then WAKE[#WAKE + 1] = id end
    else
      acc('ZADD', B .. ':dy:' .. n.q, n.r, id)
    end
  end
  if o.st ~= n.st then
    local m = pad(n.c) .. '|' .. id
    local cnt = B .. ':cnt:' .. n.q
    if o.st ~= nil then
      acc('ZREM', B .. ':ix:s:' .. o.st, m)
      acc('ZREM', ix_sq(o.st, n.q), m)
      acc('ZREM', ix_st(o.st, n.t), m)
      delta(cnt, o.st, -1)
    end
    acc('ZADD', B .. ':ix:s:' .. n.st, 0, m)
    acc('ZADD', ix_sq(n.st, n.q), 0, m)
    acc('ZADD', ix_st(n.st, n.t), 0, m)
    delta(cnt, n.st, 1)
    if o.st == ST.running then
      acc('ZREM', B .. ':hb', id)
    end
    if TERMINAL[n.st] then
      acc('ZADD', B .. ':fin', n.f or now, id)
      if n.u and redis.call('HGET', B .. ':uniq', n.u) == id then
        redis.call('HDEL', B .. ':uniq', n.u)
      end
    end
  end
  if n.st == ST.running and (o.st ~= ST.running or o.hb ~= n.hb) then
    acc('ZADD', B .. ':hb', n.hb or n.sa, id)
  end
end

-- The per-run index of workflow jobs: `B:wfs:<run>` maps each stage to its one job (the
-- (run, stage) uniqueness) and `B:wfr:<run>` holds the run's job ids scored by created_at, so
-- listing, cancelling or deleting a run reads only its own jobs. Every path that writes a job
-- naming a run adds it; every path that takes a job out of the live hashes drops it.
local function run_add(id, run, stage, created)
  if not run then return end
  redis.call('ZADD', B .. ':wfr:' .. run, created, id)
  if stage then redis.call('HSET', B .. ':wfs:' .. run, stage, id) end
end
local function run_drop(id, run, stage)
  if not run then return end
  redis.call('ZREM', B .. ':wfr:' .. run, id)
  if stage and redis.call('HGET', B .. ':wfs:' .. run, stage) == id then
    redis.call('HDEL', B .. ':wfs:' .. run, stage)
  end
end

-- Leaves wake-up tokens for blocked claimers: one per newly claimable job, at most 64 per
-- script. A token's member is the last three hex digits of its job's id (random in a UUIDv7),
-- so the marker set stays bounded at 4,096 members without a trim or a counter, and a token not
-- yet popped is simply refreshed.
local function wake(now)
  if #WAKE > 0 then
    local at = string.format('%d', now)
    local args = {}
    for i = 1, #WAKE do
      args[#args + 1] = at
      args[#args + 1] = string.sub(WAKE[i], -3)
    end
    redis.call('ZADD', B .. ':wake', unpack(args))
  end
end
