-- Shared by every flexiq script. KEYS[1], the one declared key, is the namespace base
-- `{prefix:namespace}`; every key a script touches is built from it, so all share its hash tag
-- and its Cluster slot (Redis Cluster accepts undeclared keys of the declared keys' slot).
-- Status codes are spelled through the generated header before this prelude (`scripts.rs`):
-- `ST.pending` and so on, the `CLAIMABLE` and `TERMINAL` sets, and `DEP`.
-- `B` is that base and `WAKE` the ids of jobs this call made claimable (the first 64), one
-- wake-up token each; `prelude_begin` sets both, and the index writes gathered below, at the
-- start of every call.
local B, WAKE
-- The fields a job is read back from, in the order `codec::JOB_FIELDS` lists them.
local JOB_FIELDS = { 'q', 't', 'p', 'pr', 'st', 'a', 'mr', 'bb', 'bm', 'c', 'r', 'sa', 'hb', 'f', 'w',
  'res', 'e', 'u', 'm', 'pg', 'to', 'cr', 'd', 'g', 'wr', 'ws', 'cs', 'wv', 'sc' }

local function pad(n) return string.format('%016d', n) end
-- `pad` for a number already held as its decimal string (no float formatting).
local function pads(s)
  if string.byte(s, 1) == 45 then return pad(tonumber(s)) end
  return string.rep('0', 16 - #s) .. s
end
-- A ready-set member `<run_at>|<id>`. Members of one priority (one score) sort by their bytes,
-- so run_at takes sixteen characters whose byte order is numeric order, negative (LIFO) ones
-- included: `pad` for run_at >= 0, and for run_at < 0 a '-' (below every digit) and fifteen
-- digits of LIFO_SPAN + run_at, so the more negative sorts first (run_at below 1 - LIFO_SPAN
-- reads as that bound). `rmem_at` reads it back; `keys::ready_member` writes the same in Rust.
local LIFO_SPAN = 1000000000000000
local function rmem(r, id)
  if r < 0 then
    return '-' .. string.format('%015d', LIFO_SPAN + math.max(r, 1 - LIFO_SPAN)) .. '|' .. id
  end
  return pad(r) .. '|' .. id
end
local function rmem_at(m)
  if string.byte(m, 1) == 45 then return tonumber(string.sub(m, 2, 16)) - LIFO_SPAN end
  return tonumber(string.sub(m, 1, 16))
end
-- The combined listing indexes: jobs of one status in one queue, and in one task.
local function ix_sq(st, q) return B .. ':ix:sq:' .. st .. ':' .. q end
local function ix_st(st, t) return B .. ':ix:st:' .. st .. ':' .. t end

-- Index writes are gathered per command and key and sent once per key at the end of a
-- script: members are unique per job, so removals and additions of different jobs commute.
local ACC, ACC_ORDER, DELTA, DELTA_ORDER
local function acc_reset()
  ACC, ACC_ORDER = { ZREM = {}, ZADD = {}, SADD = {} }, { ZREM = {}, ZADD = {}, SADD = {} }
  DELTA, DELTA_ORDER = {}, {}
end
local function prelude_begin()
  B = KEYS[1]
  WAKE = {}
  acc_reset()
end
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
  acc_reset()
end

-- The fields the indexes are derived from, and the attempt and stall count a status change's
-- event is named by.
local function load(id)
  local v = redis.call('HMGET', B .. ':j:' .. id, 'st', 'q', 't', 'c', 'r', 'pr', 'hb', 'sa', 'f', 'u', 'v',
    'a', 'sc')
  if not v[1] then return nil end
  return { st = tonumber(v[1]), q = v[2], t = v[3], c = tonumber(v[4]), r = tonumber(v[5]),
    pr = tonumber(v[6]), hb = tonumber(v[7]), sa = tonumber(v[8]), f = tonumber(v[9]), u = v[10],
    v = v[11], a = tonumber(v[12]), sc = tonumber(v[13]) }
end

-- The event of job `id`'s status change from `o` to `n` (`reindex`'s rows), named by
-- `ev_kind`. The data values a row does not hold are read from the job's hash as the script
-- left it, and only those the kind carries: `n.w` (worker), `n.rsz` (result bytes) and `n.e`
-- (last error) stand in for the hash when the caller knows them (false: none). A new job
-- inserted already ended by a failed dependency (`n.ended`) is reported as the waiting job it
-- stands for: `enqueued` with status waiting, then the change from waiting that ended it, so a
-- reader waiting for a terminal event sees one.
local EV_HASH = { worker_id = 'w', error = 'e' }
local function ev_status(id, o, n, now)
  if not ev_on() then return end
  if o.st == nil and n.ended then
    ev_status(id, o, { st = ST.waiting, q = n.q, t = n.t, r = n.r, a = 0 }, now)
    o = { st = ST.waiting, a = 0 }
  end
  local a0, a1 = o.a or 0, n.a or 0
  local kind = ev_kind(o.st, n.st, a0, a1, (n.sc or 0) > (o.sc or 0))
  if not kind then return end
  local v = { status = ST_NAME[n.st], run_at = n.r, worker_id = n.w, result_size = n.rsz, error = n.e }
  for _, k in ipairs(EV_FIELDS[kind] or {}) do
    if v[k] == nil then
      if k == 'result_size' then
        v[k] = redis.call('HSTRLEN', B .. ':j:' .. id, 'res')
      elseif EV_HASH[k] then
        v[k] = redis.call('HGET', B .. ':j:' .. id, EV_HASH[k])
      end
    end
  end
  if v.worker_id == '' then v.worker_id = nil end
  ev_add(kind, kind, id, n.q, n.t, a1, string.format('%d', now), ev_data(kind, v))
end

-- Moves a job between the derived structures after its fields changed from `o` to `n`
-- (`o.st == nil` for a new job): ready / delayed sets, status index and the combined status +
-- queue and status + task indexes, counters, lease set, finished set and the unique-key map,
-- and writes the status change's event (`ev_status`; `n.a` is the attempt after, 0 for a new
-- job). Call `flush()` before the script returns.
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
    ev_status(id, o, n, now)
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

-- Byte order of two strings (Lua's `<` follows the server's collation locale).
local function lt(a, b)
  local n = math.min(#a, #b)
  for k = 1, n do
    local x, y = string.byte(a, k), string.byte(b, k)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- Fields a job rewritten as a fresh pending job loses: what belonged to its earlier attempts,
-- its stall count among them (a hash without `sc` reads 0).
local CLEARED = { 'sa', 'hb', 'f', 'w', 'res', 'e', 'pg', 'cr', 'sc' }

-- Rewrites job `id`, read as `o` (`load`), in place as a fresh pending job: `set` holds the
-- fields to write and `del` the fields to remove, besides the claim sequence (kept: attempt 0
-- would otherwise restart it) and the row version (moved, so a plan decided on the old row
-- commits nothing and the old attempt's fence no longer matches). `n` is the new row as
-- `reindex` reads it, its queue and creation time taken from `o` and its attempt from `set`.
-- Used by the workflow upsert and revival and by `admin.lua`'s retry.
local function replace(id, o, set, del, n, now)
  local key = B .. ':j:' .. id
  for k = 1, #set, 2 do
    if set[k] == 'a' then n.a = tonumber(set[k + 1]) end
  end
  local seq = redis.call('HMGET', key, 'cs', 'a')
  set[#set + 1] = 'cs'
  set[#set + 1] = seq[1] or seq[2] or '0'
  set[#set + 1] = 'v'
  set[#set + 1] = string.format('%d', (tonumber(o.v) or 0) + 1)
  redis.call('HSET', key, unpack(set))
  redis.call('HDEL', key, unpack(del))
  n.q, n.c = o.q, o.c
  local m = pad(o.c) .. '|' .. id
  if o.t ~= n.t then
    -- `reindex` moves status indexes within one task: move this job's task first.
    redis.call('ZREM', B .. ':ix:t:' .. o.t, m)
    redis.call('ZADD', B .. ':ix:t:' .. n.t, 0, m)
    redis.call('ZREM', ix_st(o.st, o.t), m)
    redis.call('ZADD', ix_st(o.st, n.t), 0, m)
  end
  if TERMINAL[o.st] then redis.call('ZREM', B .. ':fin', id) end
  reindex(id, o, n, now)
end

-- Dependency edges. A job's hash lists the jobs it depends on in `d` (comma-separated ids) and
-- each edge's policy code (`EDGE`) in `dp`, aligned with `d`; a hash without `dp` (every edge
-- plain, or written before edges had policies) reads `EDGE.cancel_dependent` for each. `B:dep:<id>`
-- holds the jobs depending on `id`. `edges` reads a hash's edges as `{ id, policy }` pairs
-- (`edge_list` parses the two values) and
-- `edge_fields` gives the `d` and `dp` values that store a list (nil for an empty one; `dp` nil
-- when every edge is plain).
local function edge_list(d, dp)
  local codes, out = {}, {}
  for c in string.gmatch(dp or '', '[^,]+') do codes[#codes + 1] = tonumber(c) end
  for dep in string.gmatch(d or '', '[^,]+') do
    out[#out + 1] = { dep, codes[#out + 1] or EDGE.cancel_dependent }
  end
  return out
end
local function edges(key)
  local f = redis.call('HMGET', key, 'd', 'dp')
  return edge_list(f[1], f[2])
end
local function edge_fields(es)
  if #es == 0 then return nil, nil end
  local ids, codes, plain = {}, {}, true
  for k, e in ipairs(es) do
    ids[k] = e[1]
    codes[k] = string.format('%d', e[2])
    if e[2] ~= EDGE.cancel_dependent then plain = false end
  end
  return table.concat(ids, ','), (not plain) and table.concat(codes, ',') or nil
end
-- Writes edge list `es` into the hash `key` (`HSET` of `set`, a field list the caller adds to,
-- and `HDEL` of the edge fields an empty or plain list drops).
local function write_edges(key, es, set)
  local d, dp = edge_fields(es)
  local del = {}
  if d then
    set[#set + 1] = 'd'
    set[#set + 1] = d
  else
    del[#del + 1] = 'd'
  end
  if dp then
    set[#set + 1] = 'dp'
    set[#set + 1] = dp
  else
    del[#del + 1] = 'dp'
  end
  if #set > 0 then redis.call('HSET', key, unpack(set)) end
  if #del > 0 then redis.call('HDEL', key, unpack(del)) end
end
-- The status code of job `id`, live or archived; nil when it is gone.
local function status_of(id)
  local st = redis.call('HGET', B .. ':j:' .. id, 'st') or redis.call('HGET', B .. ':a:' .. id, 'st')
  return st and tonumber(st) or nil
end
-- The last error of job `id`, live or archived.
local function error_of(id)
  local e = redis.call('HGET', B .. ':j:' .. id, 'e')
  if e then return e end
  return redis.call('HGET', B .. ':a:' .. id, 'e') or nil
end
-- What the state machine writes as the last error of a job failing for its dependency `dep`:
-- `Event::DependencyFailed` (`act` 'c', the job is cancelled) or `Event::ChildFailed` ('f', it
-- fails, naming the child's own last error `err` when it has one).
local function failure_error(act, dep, err)
  if act == 'c' then return 'dependency ' .. dep .. ' did not complete' end
  if err then return 'child ' .. dep .. ' failed: ' .. err end
  return 'child ' .. dep .. ' failed'
end
-- The status each failure `act` ends a job in ('c' cancelled, 'f' failed).
local function failure_status(act)
  if act == 'c' then return ST.cancelled end
  return ST.failed
end
-- Where a job with edges `es` stands, given each dependency's status code (`stat(id)`; nil
-- for a dependency gone from the store, which counts as never having been one). A failed
-- dependency applies its edge's `ON_FAIL` as a plan does when it fails later: the first in
-- edge order whose policy ends the job ('c' cancel, 'f' fail) decides, returning that act and
-- the dependency; one that releases ('r') makes the job ready whatever else is open; one whose
-- edge goes ('x') is dropped from the list. Otherwise the job waits while an edge is not
-- `SETTLED`. Returns the act ('c', 'f', 'w' waiting or 'p' ready), the deciding dependency
-- (for 'c' / 'f') and the edges left.
local function standing(es, stat)
  local left, release, open = {}, false, false
  for _, e in ipairs(es) do
    local st = stat(e[1])
    local keep = true
    if st ~= nil then
      if DEP[st] == 'f' then
        local act = ON_FAIL[e[2]]
        if act == 'c' or act == 'f' then return act, e[1], es end
        if act == 'r' then release = true end
        if act == 'x' then keep = false end
      elseif not SETTLED[e[2] .. ':' .. st] then
        open = true
      end
    end
    if keep then left[#left + 1] = e end
  end
  if open and not release then return 'w', nil, left end
  return 'p', nil, left
end

-- A job leaving the store frees the dedup key it holds: `B:dd:<key>` names its holder in `jid`
-- and the holder's hash names the key in `dk` (see `dedup.lua`). The record goes only while it
-- still names job `id` (a later job may have taken the key since).
local function dd_release(key, id)
  if not key then return end
  local rec = B .. ':dd:' .. key
  if redis.call('HGET', rec, 'jid') == id then redis.call('DEL', rec) end
end

-- Deletes job `id`, read as `o` (`load`, or the fields an orphan hash still has, any of them
-- possibly nil), with everything keyed on it: ready / delayed placement, listing indexes, lease
-- and finished sets, the unique key it holds, its edges in the dependency sets (as a dependent
-- and its own set of dependents), errors, logs, partials, replays, its run's index and the
-- dedup record it holds. Its
-- status counter moves unless `counted` is false (a hash no status index holds was never
-- counted). Dependents' `d` fields and dead letters are the caller's (`admin.lua` settles
-- them; a deleted workflow stage keeps its dead letter). Index writes go through `acc`: call
-- `flush()` before the script returns.
local function drop_job(id, o, counted)
  local key = B .. ':j:' .. id
  local f = redis.call('HMGET', key, 'd', 'wr', 'ws', 'dk')
  if o.c then
    local m = pad(o.c) .. '|' .. id
    if o.st then
      acc('ZREM', B .. ':ix:s:' .. o.st, m)
      if o.q then acc('ZREM', ix_sq(o.st, o.q), m) end
      if o.t then acc('ZREM', ix_st(o.st, o.t), m) end
    end
    if o.q then acc('ZREM', B .. ':ix:q:' .. o.q, m) end
    if o.t then acc('ZREM', B .. ':ix:t:' .. o.t, m) end
  end
  if o.q then
    if o.st == nil or CLAIMABLE[o.st] then
      if o.r then acc('ZREM', B .. ':rd:' .. o.q, rmem(o.r, id)) end
      acc('ZREM', B .. ':dy:' .. o.q, id)
    end
    if counted and o.st then delta(B .. ':cnt:' .. o.q, o.st, -1) end
  end
  acc('ZREM', B .. ':hb', id)
  acc('ZREM', B .. ':fin', id)
  acc('ZREM', B .. ':errix', id)
  acc('ZREM', B .. ':logix', id)
  if o.u and redis.call('HGET', B .. ':uniq', o.u) == id then
    redis.call('HDEL', B .. ':uniq', o.u)
  end
  if f[1] then
    for dep in string.gmatch(f[1], '[^,]+') do
      redis.call('SREM', B .. ':dep:' .. dep, id)
    end
  end
  dd_release(f[4], id)
  redis.call('DEL', key, B .. ':part:' .. id, B .. ':err:' .. id, B .. ':log:' .. id,
    B .. ':dep:' .. id, B .. ':rp:' .. id)
  run_drop(id, f[2], f[3])
end

-- Removes dead-letter entry `dead_id` and its listing members; false when it is unknown.
local function drop_dead(dead_id)
  if redis.call('HEXISTS', B .. ':dlq', dead_id) == 0 then return false end
  local m = redis.call('HGET', B .. ':dlqm', dead_id)
  local t = redis.call('HGET', B .. ':dlqt', dead_id)
  redis.call('HDEL', B .. ':dlq', dead_id)
  redis.call('HDEL', B .. ':dlqt', dead_id)
  redis.call('HDEL', B .. ':dlqm', dead_id)
  if m then
    redis.call('ZREM', B .. ':dlix', m)
    if t then redis.call('ZREM', B .. ':dlt:' .. t, m) end
  end
  return true
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
