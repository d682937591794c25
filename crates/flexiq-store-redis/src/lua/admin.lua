-- Queue administration, each operation one atomic step: clean by status and age, drain,
-- obliterate one page, sweep a queue's archived copies and dead letters, retry finished jobs in
-- place, remove a job (with its children), the checks of `remove_orphans` and the wait until a
-- rate-limited queue grants its next claim. ARGV[1] names the operation. A job removed by
-- clean, drain or remove writes a `removed` event; an obliterate page writes one for the
-- queue with the count; orphans and swept copies write none (they were no live jobs).
--
-- A removed job goes through the prelude's `drop_job` together with its dead-letter entry and
-- metric rows; then its dependents outside the removal settle: each drops its edges to the
-- removed jobs, and a waiting one stands as the prelude's `standing` folds the edges it has
-- left, as an enqueue does. Every edge settled, or none left: pending
-- (`Event::DependenciesMet`). A failed dependency whose edge ends the job (the first in order):
-- cancelled or failed naming it (`Event::DependencyFailed` / `Event::ChildFailed`), and that
-- job's own dependents then apply their edges' policies, as a plan's cascade does
-- (`fail_chain`). Else it keeps waiting. A dependency gone from both the live and the archived
-- hashes counts as never having been one.
local op = ARGV[1]
local PENDING = tostring(ST.pending)
-- Index writes are flushed every this many removed jobs, so a large removal keeps its
-- accumulated argument lists bounded (the accumulator sends each in chunks as well).
local FLUSH_EVERY = 1000
-- Members read per step of a walk over a large index.
local PAGE = 500
-- The statuses `Event::DependencyFailed` cancels and `Event::ChildFailed` fails.
local UNSTARTED = { [ST.pending] = true, [ST.waiting] = true, [ST.suspended] = true }

local function bump(v) return string.format('%d', (tonumber(v) or 0) + 1) end

local function copy(o)
  local n = {}
  for k, v in pairs(o) do n[k] = v end
  return n
end

-- Removes the dead-letter entry dead job `id` of task `t` left when it died at `f`: one plan
-- writes the job's finish time and the entry's failure time, so the entry is among the task's
-- entries of that millisecond.
local function drop_dead_of(id, t, f)
  if not t or not f then return end
  local at = pad(f)
  local ms = redis.call('ZRANGE', B .. ':dlt:' .. t, '[' .. at .. '|', '(' .. at .. '}', 'BYLEX')
  for _, m in ipairs(ms) do
    local dead_id = string.sub(m, 18)
    local json = redis.call('HGET', B .. ':dlq', dead_id)
    if json and cjson.decode(json).original_job_id == id then drop_dead(dead_id) end
  end
end

-- Removes the metric rows of job `id`, created at `c` and finished at `f` (nil while it may
-- still run): each is recorded when an attempt ends, so they lie in that window of the metric
-- set, and a job never claimed (`claimed` false) has none.
local function drop_metrics(id, c, f, claimed)
  if not claimed or not c then return end
  local key = B .. ':metrics'
  local needle = '"job_id":"' .. id .. '"'
  local lo, hi = string.format('%d', c), f and string.format('%d', f) or '+inf'
  local offset = 0
  while true do
    local ms = redis.call('ZRANGE', key, lo, hi, 'BYSCORE', 'LIMIT', offset, PAGE)
    local kept = #ms
    for _, m in ipairs(ms) do
      if string.find(m, needle, 1, true) then
        redis.call('ZREM', key, m)
        kept = kept - 1
      end
    end
    if #ms < PAGE then return end
    offset = offset + kept
  end
end

-- Whether the job behind hash `key` was ever claimed (a hash without a claim sequence counts
-- its attempts, as `codec::claim_seq` reads it).
local function was_claimed(key)
  local v = redis.call('HMGET', key, 'cs', 'a')
  return (tonumber(v[1] or v[2]) or 0) > 0
end

-- Releases waiting job `x`, read as `o`, as `Event::DependenciesMet` writes it (pending).
local function release(x, o, now)
  redis.call('HSET', B .. ':j:' .. x, 'st', PENDING, 'v', bump(o.v))
  local n = copy(o)
  n.st = ST.pending
  reindex(x, o, n, now)
end

-- Ends unstarted job `x`, read as `o`, for its dependency `dep` as failure `act` says ('c'
-- `Event::DependencyFailed`, 'f' `Event::ChildFailed`): the status, finish time and error the
-- state machine writes.
local function end_for(x, o, act, dep, now)
  local st = failure_status(act)
  local err = act == 'f' and error_of(dep) or nil
  redis.call('HSET', B .. ':j:' .. x, 'st', string.format('%d', st), 'f', string.format('%d', now),
    'e', failure_error(act, dep, err), 'v', bump(o.v))
  local n = copy(o)
  n.st, n.f = st, now
  reindex(x, o, n, now)
end

-- Whether every edge of `es` is `SETTLED` (a dependency gone from the store counts as never
-- having been one).
local function all_settled(es)
  for _, e in ipairs(es) do
    local st = status_of(e[1])
    if st and not SETTLED[e[2] .. ':' .. st] then return false end
  end
  return true
end

-- Takes job `x` out of the dependents of each edge of `before` missing from `after`.
local function unlink(x, before, after)
  local kept = {}
  for _, e in ipairs(after) do kept[e[1]] = true end
  for _, e in ipairs(before) do
    if not kept[e[1]] then redis.call('SREM', B .. ':dep:' .. e[1], x) end
  end
end

-- Walks what each job of `work` failing for good does to the jobs depending on it, as a plan
-- applies `EdgePolicy::on_child_failed` (`ON_FAIL`) per edge: an unstarted dependent is
-- cancelled ('c') or failed ('f') and walked in turn; a waiting one is released at once ('r'),
-- or once every edge it has is settled ('s'; 'x' after dropping the edge).
local function fail_chain(work, now)
  local k = 1
  while k <= #work do
    local id = work[k]
    k = k + 1
    for _, x in ipairs(redis.call('SMEMBERS', B .. ':dep:' .. id)) do
      local o = load(x)
      if o then
        local key = B .. ':j:' .. x
        local es = edges(key)
        local act
        for _, e in ipairs(es) do
          if e[1] == id then act = ON_FAIL[e[2]] end
        end
        if act == 'c' or act == 'f' then
          if UNSTARTED[o.st] then
            end_for(x, o, act, id, now)
            work[#work + 1] = x
          end
        elseif act == 'r' then
          if o.st == ST.waiting then release(x, o, now) end
        elseif act == 's' or act == 'x' then
          if act == 'x' then
            local left = {}
            for _, e in ipairs(es) do
              if e[1] ~= id then left[#left + 1] = e end
            end
            o.v = bump(o.v)
            write_edges(key, left, { 'v', o.v })
            unlink(x, es, left)
            es = left
          end
          if o.st == ST.waiting and all_settled(es) then release(x, o, now) end
        end
      end
    end
  end
end

-- Settles jobs `xs`, dependents of the removed jobs `gone` (a set), as the header describes.
local function settle(xs, gone, now)
  local ended = {}
  for _, x in ipairs(xs) do
    local o = load(x)
    if o then
      local key = B .. ':j:' .. x
      local keep = {}
      for _, e in ipairs(edges(key)) do
        if not gone[e[1]] then keep[#keep + 1] = e end
      end
      local act, dep
      if o.st == ST.waiting then
        local left
        act, dep, left = standing(keep, status_of)
        if act == 'p' or act == 'w' then
          unlink(x, keep, left)
          keep = left
        end
      end
      o.v = bump(o.v)
      write_edges(key, keep, { 'v', o.v })
      if act == 'p' then
        release(x, o, now)
      elseif act == 'c' or act == 'f' then
        end_for(x, o, act, dep, now)
        ended[#ended + 1] = x
      end
    end
  end
  fail_chain(ended, now)
end

-- Removes the live jobs `ids` with everything kept about them and settles their dependents;
-- returns how many went. Each writes a `removed` event unless `quiet` (obliterate reports its
-- page as one).
local function remove_jobs(ids, now, quiet)
  local at = string.format('%d', now)
  local gone = {}
  for _, id in ipairs(ids) do gone[id] = true end
  local freed, seen = {}, {}
  local n = 0
  for _, id in ipairs(ids) do
    local o = load(id)
    if o then
      for _, x in ipairs(redis.call('SMEMBERS', B .. ':dep:' .. id)) do
        if not gone[x] and not seen[x] then
          seen[x] = true
          freed[#freed + 1] = x
        end
      end
      if not quiet then ev_add('removed', 'removed', id, o.q, o.t, o.a, at, '{}') end
      if o.st == ST.dead then drop_dead_of(id, o.t, o.f) end
      drop_metrics(id, o.c, TERMINAL[o.st] and o.f or nil, was_claimed(B .. ':j:' .. id))
      drop_job(id, o, true)
      n = n + 1
      if n % FLUSH_EVERY == 0 then flush() end
    end
  end
  settle(freed, gone, now)
  flush()
  wake(now)
  return n
end

-- Deletes archived job `id` (listed in `B:aix` as member `m`) with its dead-letter entry,
-- history, edges and the dedup record it holds, settling the jobs that named it as a
-- dependency.
local function drop_archived(id, m, now)
  local a = B .. ':a:' .. id
  local f = redis.call('HMGET', a, 'st', 't', 'f', 'd', 'c', 'dk')
  if tonumber(f[1]) == ST.dead then drop_dead_of(id, f[2], tonumber(f[3])) end
  drop_metrics(id, tonumber(f[5]), tonumber(f[3]), was_claimed(a))
  for dep in string.gmatch(f[4] or '', '[^,]+') do
    redis.call('SREM', B .. ':dep:' .. dep, id)
  end
  local freed = redis.call('SMEMBERS', B .. ':dep:' .. id)
  dd_release(f[6], id)
  redis.call('DEL', a, B .. ':part:' .. id, B .. ':err:' .. id, B .. ':log:' .. id,
    B .. ':dep:' .. id, B .. ':rp:' .. id)
  redis.call('ZREM', B .. ':aix', m)
  redis.call('ZREM', B .. ':aat', id)
  redis.call('ZREM', B .. ':errix', id)
  redis.call('ZREM', B .. ':logix', id)
  settle(freed, { [id] = true }, now)
end

-- Up to `limit` jobs of status `st` in queue `q` finished at or before `cutoff` (nil: at any
-- time), oldest finished first (finish time, then id). Reads the smaller candidate set: the
-- queue's jobs of that status (sorted here), or the namespace's jobs finished by then (the
-- finished set, which Redis keeps in that order).
local function oldest_finished(q, st, cutoff, limit)
  local ix = ix_sq(st, q)
  local hi = cutoff and string.format('%d', cutoff) or '+inf'
  local out = {}
  if redis.call('ZCARD', ix) <= redis.call('ZCOUNT', B .. ':fin', '-inf', hi) then
    local found = {}
    for _, m in ipairs(redis.call('ZRANGE', ix, 0, -1)) do
      local id = string.sub(m, 18)
      local f = tonumber(redis.call('HGET', B .. ':j:' .. id, 'f'))
      if f and (not cutoff or f <= cutoff) then found[#found + 1] = { f = f, id = id } end
    end
    table.sort(found, function(a, b)
      if a.f ~= b.f then return a.f < b.f end
      return lt(a.id, b.id)
    end)
    for k = 1, math.min(limit, #found) do out[k] = found[k].id end
    return out
  end
  local offset = 0
  while #out < limit do
    local ids = redis.call('ZRANGE', B .. ':fin', '-inf', hi, 'BYSCORE', 'LIMIT', offset, PAGE)
    if #ids == 0 then break end
    for _, id in ipairs(ids) do
      local f = redis.call('HMGET', B .. ':j:' .. id, 'q', 'st')
      if f[1] == q and tonumber(f[2]) == st and #out < limit then out[#out + 1] = id end
    end
    offset = offset + #ids
  end
  return out
end

-- Up to `limit` jobs of status `st` in queue `q` created at or before `cutoff`, oldest first:
-- a prefix of the status + queue index, whose members sort by creation time, then id.
local function oldest_created(q, st, cutoff, limit)
  local out = {}
  if cutoff < 0 then return out end
  local ms = redis.call('ZRANGE', ix_sq(st, q), '-', '(' .. pad(cutoff + 1), 'BYLEX', 'LIMIT', 0, limit)
  for k, m in ipairs(ms) do out[k] = string.sub(m, 18) end
  return out
end

if op == 'clean' then
  -- ARGV: op, queue, status code (not running), cutoff (Unix ms), limit, now. Returns the
  -- removed ids, oldest first.
  local q, st, cutoff = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
  local limit, now = tonumber(ARGV[5]), tonumber(ARGV[6])
  local ids
  if TERMINAL[st] then
    ids = oldest_finished(q, st, cutoff, limit)
  else
    ids = oldest_created(q, st, cutoff, limit)
  end
  remove_jobs(ids, now)
  return ids
elseif op == 'drain' then
  -- ARGV: op, queue, include_delayed ('0' / '1'), now. Due pending jobs are in the ready set
  -- (with suspended ones, and maybe some due only after `now`) and among the delayed set's
  -- due ones; with delayed ones, every pending job of the queue. Returns how many went.
  local q, now = ARGV[2], tonumber(ARGV[4])
  local ids = {}
  if ARGV[3] == '1' then
    for _, m in ipairs(redis.call('ZRANGE', ix_sq(ST.pending, q), 0, -1)) do ids[#ids + 1] = string.sub(m, 18) end
  else
    local function pending(id)
      if redis.call('HGET', B .. ':j:' .. id, 'st') == PENDING then ids[#ids + 1] = id end
    end
    for _, m in ipairs(redis.call('ZRANGE', B .. ':rd:' .. q, 0, -1)) do
      if rmem_at(m) <= now then pending(string.sub(m, 18)) end
    end
    for _, id in ipairs(redis.call('ZRANGE', B .. ':dy:' .. q, '-inf', now, 'BYSCORE')) do pending(id) end
  end
  return remove_jobs(ids, now)
elseif op == 'obliterate' then
  -- ARGV: op, queue, force ('0' / '1'), count, now. Removes the queue's oldest `count` jobs,
  -- refusing a queue with running jobs without force; once none is left, its placement sets,
  -- counts, controls, rate bucket and registry entries go too. Returns the jobs left.
  local q, force, count, now = ARGV[2], ARGV[3] == '1', tonumber(ARGV[4]), tonumber(ARGV[5])
  local running = tonumber(redis.call('HGET', B .. ':cnt:' .. q, ST.running) or '0')
  if running > 0 and not force then
    return redis.error_reply('FLEXIQ_CONFLICT queue ' .. q .. ' has ' .. running
      .. ' running jobs: obliterate with force to remove them too')
  end
  local ixq = B .. ':ix:q:' .. q
  local ids = {}
  for _, m in ipairs(redis.call('ZRANGE', ixq, 0, count - 1)) do
    local id = string.sub(m, 18)
    if redis.call('EXISTS', B .. ':j:' .. id) == 1 then
      ids[#ids + 1] = id
    else
      redis.call('ZREM', ixq, m)
    end
  end
  local gone = remove_jobs(ids, now, true)
  if gone > 0 then
    ev_add('removed', 'removed', nil, q, nil, nil, ARGV[5], '{"count":' .. gone .. '}')
  end
  local left = redis.call('ZCARD', ixq)
  if left == 0 then
    local keys = { B .. ':rd:' .. q, B .. ':dy:' .. q, B .. ':cnt:' .. q, B .. ':qc:' .. q, B .. ':rb:' .. q }
    for _, code in pairs(ST) do keys[#keys + 1] = ix_sq(code, q) end
    redis.call('DEL', unpack(keys))
    redis.call('SREM', B .. ':queues', q)
    redis.call('SREM', B .. ':paused', q)
    redis.call('ZREM', B .. ':wake', 'resume:' .. q)
  end
  return left
elseif op == 'sweep' then
  -- ARGV: op, queue, 'archived' or 'dead', the last member the previous step read ('' at
  -- first), now. Removes the queue's archived copies or dead-letter entries among the next
  -- PAGE members of their listing index. Returns { removed, member to continue after ('' when
  -- the walk is done) }.
  local q, kind, after, now = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
  local ix = B .. (kind == 'archived' and ':aix' or ':dlix')
  local ms = redis.call('ZRANGE', ix, after == '' and '-' or '(' .. after, '+', 'BYLEX', 'LIMIT', 0, PAGE)
  local n = 0
  for _, m in ipairs(ms) do
    local id = string.sub(m, 18)
    if kind == 'archived' then
      if redis.call('HGET', B .. ':a:' .. id, 'q') == q then
        drop_archived(id, m, now)
        n = n + 1
      end
    else
      local json = redis.call('HGET', B .. ':dlq', id)
      if json and cjson.decode(json).queue == q and drop_dead(id) then n = n + 1 end
    end
  end
  flush()
  wake(now)
  return { n, #ms == PAGE and ms[#ms] or '' }
elseif op == 'retry' then
  -- ARGV: op, queue, status code (failed, dead or completed), count, now. Each job, oldest
  -- finished first, is rewritten in place as a fresh pending job due now (the prelude's
  -- `replace`: attempt 0, stall count 0, claim sequence kept); a dead one's entry goes.
  -- Returns how many.
  local q, st, count, at = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
  local now = tonumber(at)
  local ids = oldest_finished(q, st, nil, count)
  for _, id in ipairs(ids) do
    local o = load(id)
    if o.st == ST.dead then drop_dead_of(id, o.t, o.f) end
    local n = { st = ST.pending, t = o.t, r = now, pr = o.pr }
    replace(id, o, { 'st', PENDING, 'a', '0', 'r', at }, { unpack(CLEARED) }, n, now)
  end
  flush()
  wake(now)
  return #ids
elseif op == 'remove' then
  -- ARGV: op, job id, remove_children ('0' / '1'), now. The removal set is the job and, with
  -- children, transitively each live job it depends on whose live dependents are all in the
  -- set (grown to a fixed point, so a child shared by two removed parents goes too). A running
  -- job in the set refuses the whole removal. Returns the removed ids, the job first; none
  -- for an unknown job.
  local root, now = ARGV[2], tonumber(ARGV[4])
  if not load(root) then return {} end
  local set, order = { [root] = true }, { root }
  if ARGV[3] == '1' then
    local cands, seen = {}, {}
    local function add_deps(id)
      for dep in string.gmatch(redis.call('HGET', B .. ':j:' .. id, 'd') or '', '[^,]+') do
        if not seen[dep] then
          seen[dep] = true
          cands[#cands + 1] = dep
        end
      end
    end
    add_deps(root)
    local grew = true
    while grew do
      grew = false
      for _, c in ipairs(cands) do
        if not set[c] and redis.call('EXISTS', B .. ':j:' .. c) == 1 then
          local owned = true
          for _, x in ipairs(redis.call('SMEMBERS', B .. ':dep:' .. c)) do
            if not set[x] and redis.call('EXISTS', B .. ':j:' .. x) == 1 then
              owned = false
              break
            end
          end
          if owned then
            set[c] = true
            order[#order + 1] = c
            add_deps(c)
            grew = true
          end
        end
      end
    end
  end
  for _, id in ipairs(order) do
    if tonumber(redis.call('HGET', B .. ':j:' .. id, 'st')) == ST.running then
      return redis.error_reply('FLEXIQ_CONFLICT job ' .. id
        .. ' is running: cancel it or let it finish before removing it')
    end
  end
  remove_jobs(order, now)
  return order
elseif op == 'ttl' then
  -- ARGV: op, queue, now. Milliseconds until the queue's bucket (`take.lua`'s `refill`, what a
  -- claim reads) holds a whole token: 0 without a rate limit or with a token there now.
  local q, now = ARGV[2], tonumber(ARGV[3])
  local cfg = redis.call('HMGET', B .. ':qc:' .. q, 'rc', 'rp')
  if not cfg[1] then return 0 end
  local count, per = tonumber(cfg[1]), tonumber(cfg[2])
  local bucket = refill(q, count, per, now)
  if bucket.tokens >= 1 then return 0 end
  -- The small slack keeps float noise in the refill from adding a millisecond.
  return math.ceil((1 - bucket.tokens) * per / count - 1e-6)
elseif op == 'orphan_jobs' then
  -- ARGV: op, job id ... Deletes each job hash that none of the status indexes holds, with
  -- whatever else names it (`drop_job`; its counters never counted it). Returns how many.
  local n = 0
  for k = 2, #ARGV do
    local id = ARGV[k]
    local v = redis.call('HMGET', B .. ':j:' .. id, 'st', 'q', 't', 'c', 'r', 'u')
    local st = tonumber(v[1])
    local held = false
    if st and v[4] then
      local m = pads(v[4]) .. '|' .. id
      for _, code in pairs(ST) do
        if redis.call('ZSCORE', B .. ':ix:s:' .. code, m) then
          held = true
          break
        end
      end
    end
    if not held and redis.call('EXISTS', B .. ':j:' .. id) == 1 then
      drop_job(id, { st = st, q = v[2], t = v[3], c = tonumber(v[4]), r = tonumber(v[5]), u = v[6] }, false)
      n = n + 1
    end
  end
  flush()
  return n
elseif op == 'orphan_keys' then
  -- ARGV: op, key suffix ... (`err:<id>`, `log:<id>`, `part:<id>`, `rp:<id>`, `dep:<id>`,
  -- and `dd:<key>`, a dedup record, whose job is the holder it names). Deletes each per-job key
  -- whose job is neither live nor archived. Returns how many.
  local SIDE = { err = true, log = true, part = true, rp = true, dep = true, dd = true }
  local n = 0
  for k = 2, #ARGV do
    local kind, id = string.match(ARGV[k], '^(%a+):(.+)$')
    if kind == 'dd' then id = redis.call('HGET', B .. ':' .. ARGV[k], 'jid') or nil end
    if kind and id and SIDE[kind] and redis.call('EXISTS', B .. ':j:' .. id, B .. ':a:' .. id) == 0
      and redis.call('DEL', B .. ':' .. ARGV[k]) == 1 then
      n = n + 1
      if kind == 'err' then redis.call('ZREM', B .. ':errix', id) end
      if kind == 'log' then redis.call('ZREM', B .. ':logix', id) end
    end
  end
  return n
elseif op == 'orphan_index' then
  -- ARGV: op, key suffix, scan cursor ('0' at first). Removes the next members of an index
  -- whose job is gone: live-job indexes (listing `ix:*` and ready `rd:*` members are
  -- `<16 digits>|<id>`; delayed, lease, finished and run members, stage and unique-key values
  -- are ids) need the live hash, history indexes (`errix`, `logix`, `dep:<id>` sets) a live or
  -- archived one. Returns { removed, next cursor ('0' when done) }.
  local suffix, cursor = ARGV[2], ARGV[3]
  local key = B .. ':' .. suffix
  local head = string.match(suffix, '^[^:]+')
  local padded = head == 'ix' or head == 'rd'
  local history = suffix == 'errix' or suffix == 'logix' or head == 'dep'
  local function gone(id)
    if redis.call('EXISTS', B .. ':j:' .. id) == 1 then return false end
    return not history or redis.call('EXISTS', B .. ':a:' .. id) == 0
  end
  local kind = redis.call('TYPE', key).ok
  local n = 0
  local r
  if kind == 'zset' then
    r = redis.call('ZSCAN', key, cursor, 'COUNT', PAGE)
    for k = 1, #r[2], 2 do
      local m = r[2][k]
      if gone(padded and string.sub(m, 18) or m) then
        redis.call('ZREM', key, m)
        n = n + 1
      end
    end
  elseif kind == 'hash' then
    r = redis.call('HSCAN', key, cursor, 'COUNT', PAGE)
    for k = 1, #r[2], 2 do
      if gone(r[2][k + 1]) then
        redis.call('HDEL', key, r[2][k])
        n = n + 1
      end
    end
  elseif kind == 'set' then
    r = redis.call('SSCAN', key, cursor, 'COUNT', PAGE)
    for _, id in ipairs(r[2]) do
      if gone(id) then
        redis.call('SREM', key, id)
        n = n + 1
      end
    end
  else
    return { 0, '0' }
  end
  return { n, r[1] }
end
return redis.error_reply('FLEXIQ_INVALID unknown operation ' .. op)
