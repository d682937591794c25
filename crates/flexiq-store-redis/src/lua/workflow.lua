-- Workflow stages: the upsert by (run, stage), the fair claim and the deletion of stages, each
-- one atomic step. ARGV[1] names the operation. The per-run index (`run_add` / `run_drop` in
-- the prelude) finds a pair's job; the claim step is `take.lua`'s, so a fair-claimed job is
-- written exactly as `claim.lua` writes one.
local op = ARGV[1]
local PENDING = tostring(ST.pending)

-- Byte order of two strings (Lua's `<` follows the server's collation locale).
local function lt(a, b)
  local n = math.min(#a, #b)
  for k = 1, n do
    local x, y = string.byte(a, k), string.byte(b, k)
    if x ~= y then return x < y end
  end
  return #a < #b
end

if op == 'upsert' then
  -- Inserts each stage, or replaces the job its (run, stage) pair already has in place: same
  -- id, created_at, queue and claim sequence; the new task, payload, priority, run_at, retry
  -- budget, backoff, timeout, metadata, group and version; status pending, attempt 0 and no
  -- worker, lease, start, finish, result, progress, cancel request or last error. Its version
  -- moves, so a plan decided on the old row commits nothing, and its old attempt's fence no
  -- longer matches. A revoked task refuses the whole call before any write.
  -- ARGV: op, now, njobs, per job: id, queue, task, payload, priority, run_at, max_retries,
  -- backoff_base, backoff_max, run, stage, nextra, (field, value) ... (extra fields: to, m, g,
  -- wv; those a job does not carry are cleared on a replaced row).
  local at = ARGV[2]
  local now = tonumber(at)
  local njobs = tonumber(ARGV[3])
  local jobs = {}
  local i = 4
  for _ = 1, njobs do
    local j = { id = ARGV[i], q = ARGV[i + 1], t = ARGV[i + 2], p = ARGV[i + 3], pr = ARGV[i + 4],
      r = ARGV[i + 5], mr = ARGV[i + 6], bb = ARGV[i + 7], bm = ARGV[i + 8], run = ARGV[i + 9],
      stage = ARGV[i + 10], extra = {} }
    local nextra = tonumber(ARGV[i + 11])
    for k = 0, nextra - 1 do
      j.extra[ARGV[i + 12 + 2 * k]] = ARGV[i + 13 + 2 * k]
    end
    i = i + 12 + 2 * nextra
    jobs[#jobs + 1] = j
  end
  if redis.call('SCARD', B .. ':revoked') > 0 then
    for _, j in ipairs(jobs) do
      if redis.call('SISMEMBER', B .. ':revoked', j.t) == 1 then
        return redis.error_reply('FLEXIQ_REVOKED ' .. j.t)
      end
    end
  end
  local OPTIONAL = { 'to', 'm', 'g', 'wv' }
  -- Fields a replaced row loses: what belonged to its earlier attempts.
  local CLEARED = { 'sa', 'hb', 'f', 'w', 'res', 'e', 'pg', 'cr' }
  local out = {}
  for _, j in ipairs(jobs) do
    local held = redis.call('HGET', B .. ':wfs:' .. j.run, j.stage)
    local o = held and load(held)
    local set = { 't', j.t, 'p', j.p, 'pr', j.pr, 'r', j.r, 'mr', j.mr, 'bb', j.bb, 'bm', j.bm,
      'st', PENDING, 'a', '0' }
    for _, name in ipairs(OPTIONAL) do
      if j.extra[name] then
        set[#set + 1] = name
        set[#set + 1] = j.extra[name]
      end
    end
    local n = { st = ST.pending, t = j.t, r = tonumber(j.r), pr = tonumber(j.pr) }
    if o then
      local id = held
      local key = B .. ':j:' .. id
      local seq = redis.call('HMGET', key, 'cs', 'a')
      set[#set + 1] = 'cs'
      set[#set + 1] = seq[1] or seq[2] or '0'
      set[#set + 1] = 'v'
      set[#set + 1] = string.format('%d', (tonumber(o.v) or 0) + 1)
      redis.call('HSET', key, unpack(set))
      local del = { unpack(CLEARED) }
      for _, name in ipairs(OPTIONAL) do
        if not j.extra[name] then del[#del + 1] = name end
      end
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
      out[#out + 1] = id
    else
      local id = j.id
      set[#set + 1] = 'q'
      set[#set + 1] = j.q
      set[#set + 1] = 'c'
      set[#set + 1] = at
      set[#set + 1] = 'v'
      set[#set + 1] = '1'
      set[#set + 1] = 'wr'
      set[#set + 1] = j.run
      set[#set + 1] = 'ws'
      set[#set + 1] = j.stage
      redis.call('HSET', B .. ':j:' .. id, unpack(set))
      local m = pad(now) .. '|' .. id
      acc('ZADD', B .. ':ix:q:' .. j.q, '0', m)
      acc('ZADD', B .. ':ix:t:' .. j.t, '0', m)
      acc('SADD', B .. ':queues', j.q)
      n.q, n.c = j.q, now
      reindex(id, {}, n, now)
      run_add(id, j.run, j.stage, at)
      out[#out + 1] = id
    end
  end
  flush()
  wake(now)
  return out
elseif op == 'claim' then
  -- Claims one job of the listed queues whose (task, version) a served pair matches. Without
  -- a cap: the best by priority, run_at, then id. With one: running jobs of those queues are
  -- counted per group (`g`, the default group '' when unset), groups at the cap are skipped,
  -- and of the groups left with a claimable job the first after the namespace's cursor
  -- (`B:wfcur`, byte order, wrapping to the smallest) is served, its best job claimed and the
  -- cursor set to it.
  -- ARGV: op, now, worker, cap ('' for none), nqueues, queue ..., nserves, then per served
  -- pair: workflow, has_version ('0' / '1'), version.
  local at = ARGV[2]
  local now = tonumber(at)
  local worker = ARGV[3]
  local cap = tonumber(ARGV[4])
  local nq = tonumber(ARGV[5])
  local queues, listed = {}, {}
  for k = 6, 5 + nq do
    if not listed[ARGV[k]] then
      listed[ARGV[k]] = true
      queues[#queues + 1] = ARGV[k]
    end
  end
  local i = 6 + nq
  local nserves = tonumber(ARGV[i])
  i = i + 1
  -- task -> true (every version) or a set of versions
  local served = {}
  for _ = 1, nserves do
    local wf, has, ver = ARGV[i], ARGV[i + 1] == '1', ARGV[i + 2]
    if not has then
      served[wf] = true
    elseif served[wf] ~= true then
      served[wf] = served[wf] or {}
      served[wf][ver] = true
    end
    i = i + 3
  end
  local function serves(t, wv)
    if nserves == 0 then return true end
    local s = served[t]
    if s == true then return true end
    return s ~= nil and wv ~= false and s[wv] == true
  end
  local running = {}
  if cap then
    for _, q in ipairs(queues) do
      for _, m in ipairs(redis.call('ZRANGE', ix_sq(RUNNING, q), 0, -1)) do
        local g = redis.call('HGET', B .. ':j:' .. string.sub(m, 18), 'g') or ''
        running[g] = (running[g] or 0) + 1
      end
    end
  end
  -- The best candidate per group (one group, '', without a cap).
  local best = {}
  local function better(c, than)
    if not than then return true end
    if c.s ~= than.s then return c.s < than.s end
    return lt(c.m, than.m)
  end
  local buckets = {}
  local PAGE = 200
  for _, q in ipairs(queues) do
    if redis.call('SISMEMBER', B .. ':paused', q) == 0 then
      promote(q, now)
      if allowance(q, 1, now, buckets) > 0 then
        local rd = B .. ':rd:' .. q
        local seen = {} -- groups this queue already gave its best candidate for
        local start, done = 0, false
        while not done do
          local page = redis.call('ZRANGE', rd, start, start + PAGE - 1, 'WITHSCORES')
          if #page == 0 then break end
          for k = 1, #page, 2 do
            local m = page[k]
            local id = string.sub(m, 18)
            if tonumber(string.sub(m, 1, 16)) <= now then
              local f = redis.call('HMGET', B .. ':j:' .. id, 'st', 't', 'wv', 'g', 'wr')
              if f[5] and CLAIMABLE[tonumber(f[1])] and serves(f[2], f[3]) then
                local g = cap and (f[4] or '') or ''
                if not seen[g] and (not cap or (running[g] or 0) < cap) then
                  seen[g] = true
                  local c = { s = tonumber(page[k + 1]), m = m, id = id, q = q }
                  if better(c, best[g]) then best[g] = c end
                  -- Without a cap this queue's first match is its best: the rest cannot win.
                  if not cap then
                    done = true
                    break
                  end
                end
              end
            end
          end
          start = start + PAGE
        end
      end
    end
  end
  local chosen
  if cap then
    local cursor = redis.call('GET', B .. ':wfcur')
    local after, lowest
    for g in pairs(best) do
      if not lowest or lt(g, lowest) then lowest = g end
      if cursor and lt(cursor, g) and (not after or lt(g, after)) then after = g end
    end
    chosen = after or lowest
  elseif best[''] then
    chosen = ''
  end
  local out = {}
  if chosen then
    local c = best[chosen]
    local f = take(c.id, c.q, c.m, worker, at, buckets)
    if f then
      out = { c.id, f }
      if cap then redis.call('SET', B .. ':wfcur', chosen) end
    end
  end
  flush()
  save_buckets(buckets)
  return out
elseif op == 'delete' then
  -- Deletes the jobs of the listed stages of one run, whatever their status, with everything
  -- kept for them: ready / delayed placement, listing indexes, counters, lease and finished
  -- sets, the unique key they hold, dependency links, errors, logs, partials and replays.
  -- ARGV: op, run, stage ... Returns how many jobs went.
  local run = ARGV[2]
  local gone = 0
  for k = 3, #ARGV do
    local stage = ARGV[k]
    local id = redis.call('HGET', B .. ':wfs:' .. run, stage)
    if id then
      local key = B .. ':j:' .. id
      local o = load(id)
      if o then
        local d = redis.call('HGET', key, 'd')
        local m = pad(o.c) .. '|' .. id
        if CLAIMABLE[o.st] then
          redis.call('ZREM', B .. ':rd:' .. o.q, rmem(o.r, id))
          redis.call('ZREM', B .. ':dy:' .. o.q, id)
        end
        redis.call('ZREM', B .. ':ix:s:' .. o.st, m)
        redis.call('ZREM', ix_sq(o.st, o.q), m)
        redis.call('ZREM', ix_st(o.st, o.t), m)
        redis.call('ZREM', B .. ':ix:q:' .. o.q, m)
        redis.call('ZREM', B .. ':ix:t:' .. o.t, m)
        redis.call('HINCRBY', B .. ':cnt:' .. o.q, o.st, -1)
        redis.call('ZREM', B .. ':hb', id)
        redis.call('ZREM', B .. ':fin', id)
        if o.u and redis.call('HGET', B .. ':uniq', o.u) == id then
          redis.call('HDEL', B .. ':uniq', o.u)
        end
        if d then
          for dep in string.gmatch(d, '[^,]+') do
            redis.call('SREM', B .. ':dep:' .. dep, id)
          end
        end
        redis.call('DEL', key, B .. ':part:' .. id, B .. ':err:' .. id, B .. ':log:' .. id,
          B .. ':dep:' .. id, B .. ':rp:' .. id)
        redis.call('ZREM', B .. ':errix', id)
        redis.call('ZREM', B .. ':logix', id)
        gone = gone + 1
      end
      run_drop(id, run, stage)
    end
  end
  return gone
end
return redis.error_reply('FLEXIQ_INVALID unknown operation ' .. op)
