-- Workflow stages: the upsert by (run, stage), the fair claim, the revival of a dead stage and
-- the deletion of stages, each one atomic step. ARGV[1] names the operation. The per-run index
-- (`run_add` / `run_drop` in the prelude) finds a pair's job; the claim step is `take.lua`'s,
-- so a fair-claimed job is written exactly as `claim.lua` writes one; a replaced or revived row
-- is rewritten by the prelude's `replace` and a deleted one removed by its `drop_job`.
local op = ARGV[1]
local PENDING = tostring(ST.pending)

if op == 'upsert' then
  -- Inserts each stage, or replaces the job its (run, stage) pair already has in place: same
  -- id, created_at, queue and claim sequence; the new task, payload, priority, run_at, retry
  -- budget, backoff, timeout, metadata, group and version; status pending, attempt 0, stall
  -- count 0 and no worker, lease, start, finish, result, progress, cancel request or last
  -- error. Its version
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
      local del = { unpack(CLEARED) }
      for _, name in ipairs(OPTIONAL) do
        if not j.extra[name] then del[#del + 1] = name end
      end
      replace(held, o, set, del, n, now)
      out[#out + 1] = held
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
  -- Claims up to one job per listed worker of the listed queues whose (task, version) a served
  -- pair matches: exactly the jobs as many single claims one after another would take, the
  -- n-th stamped with the n-th worker. A single claim, without a cap, takes the best job by
  -- priority, run_at, then id. With one, running jobs of those queues are counted per group
  -- (`g`, the default group '' when unset), groups at the cap are skipped, and of the groups
  -- left with a claimable job the first after the namespace's cursor (`B:wfcur`, byte order,
  -- wrapping to the smallest) is served, its best job claimed and the cursor set to it.
  -- The batch reads once what single claims would read again: the per-group running counts
  -- and each queue's allowance (concurrency cap and rate tokens) are Lua locals that every
  -- pick moves, the ready sets are walked once, and the cursor is read and written once. Due
  -- delayed jobs are promoted once per batch (at most 1,000 per queue, as one claim does).
  -- ARGV: op, now, cap ('' for none), nworkers, worker ..., nqueues, queue ..., nserves, then
  -- per served pair: workflow, has_version ('0' / '1'), version.
  local at = ARGV[2]
  local now = tonumber(at)
  local cap = tonumber(ARGV[3])
  local nw = tonumber(ARGV[4])
  local workers = { unpack(ARGV, 5, 4 + nw) }
  local i = 5 + nw
  local nq = tonumber(ARGV[i])
  local queues, listed = {}, {}
  for k = i + 1, i + nq do
    if not listed[ARGV[k]] then
      listed[ARGV[k]] = true
      queues[#queues + 1] = ARGV[k]
    end
  end
  i = i + 1 + nq
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
  local function better(c, than)
    if not than then return true end
    if c.s ~= than.s then return c.s < than.s end
    return lt(c.m, than.m)
  end
  -- Per queue the jobs it may still start in this claim, and per queue and group (one group,
  -- '', without a cap) its matching jobs in ready-set order with the position `h` of the next
  -- one to take. A list holds no more jobs than the claim could take from it: no more than
  -- the workers, the queue's allowance and the group's free slots.
  local buckets = {}
  local allow, found = {}, {}
  local PAGE = 200
  for _, q in ipairs(queues) do
    if redis.call('SISMEMBER', B .. ':paused', q) == 0 then
      promote(q, now)
      local a = allowance(q, nw, now, buckets)
      if a > 0 then
        allow[q] = a
        local per = {}
        found[q] = per
        local rd = B .. ':rd:' .. q
        local start, done = 0, false
        while not done do
          local page = redis.call('ZRANGE', rd, start, start + PAGE - 1, 'WITHSCORES')
          if #page == 0 then break end
          for k = 1, #page, 2 do
            local m = page[k]
            local id = string.sub(m, 18)
            if rmem_at(m) <= now then
              local f = redis.call('HMGET', B .. ':j:' .. id, 'st', 't', 'wv', 'g', 'wr')
              if f[5] and CLAIMABLE[tonumber(f[1])] and serves(f[2], f[3]) then
                local g = cap and (f[4] or '') or ''
                local room = cap and math.min(a, cap - (running[g] or 0)) or a
                local list = per[g]
                if not list and room > 0 then
                  list = { h = 1 }
                  per[g] = list
                end
                if list and #list < room then
                  list[#list + 1] = { s = tonumber(page[k + 1]), m = m, id = id, q = q }
                  -- Without a cap the queue's first `a` matches are all it can give.
                  if not cap and #list == a then
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
  -- The best job group `g` can still give: the best head of its lists in queues with
  -- allowance left, none once the group is at its cap.
  local function head(g)
    if cap and (running[g] or 0) >= cap then return nil end
    local best
    for _, q in ipairs(queues) do
      local list = found[q] and found[q][g]
      if list and allow[q] > 0 and list.h <= #list and better(list[list.h], best) then
        best = list[list.h]
      end
    end
    return best
  end
  local out = {}
  local served_to = 0 -- workers given a job so far
  local function give(c, g)
    local list = found[c.q][g]
    list.h = list.h + 1
    local f = take(c.id, c.q, c.m, workers[served_to + 1], at, buckets)
    if not f then return false end
    served_to = served_to + 1
    allow[c.q] = allow[c.q] - 1
    running[g] = (running[g] or 0) + 1
    out[#out + 1] = c.id
    out[#out + 1] = f
    return true
  end
  if not cap then
    while served_to < nw do
      local c = head('')
      if not c then break end
      give(c, '')
    end
  else
    -- The groups with a matching job, in byte order, and per position a later one to look at
    -- for a group that can give no more jobs in this claim (its running count and the
    -- allowances only grow and shrink, its lists only shorten), so each pick skips it in
    -- amortized constant time.
    local order, named = {}, {}
    for _, q in ipairs(queues) do
      for g in pairs(found[q] or {}) do
        if not named[g] then
          named[g] = true
          order[#order + 1] = g
        end
      end
    end
    table.sort(order, lt)
    local ng = #order
    local skip = {}
    local function live(k)
      local r = k
      while skip[r] do r = skip[r] end
      while skip[k] and skip[k] ~= r do
        local nx = skip[k]
        skip[k] = r
        k = nx
      end
      return r
    end
    -- The position of the first group after `cursor` (ng + 1 when none is).
    local cursor = redis.call('GET', B .. ':wfcur')
    local pos = 1
    if cursor then
      local lo, hi = 1, ng + 1
      while lo < hi do
        local mid = math.floor((lo + hi) / 2)
        if lt(cursor, order[mid]) then hi = mid else lo = mid + 1 end
      end
      pos = lo
    end
    local moved = false
    while served_to < nw do
      local k = live(pos)
      if k > ng then k = live(1) end
      if k > ng then break end
      local g = order[k]
      local c = head(g)
      if not c then
        skip[k] = k + 1
        pos = k
      elseif give(c, g) then
        cursor, moved = g, true
        pos = k + 1
      else
        pos = k
      end
    end
    if moved then redis.call('SET', B .. ':wfcur', cursor) end
  end
  flush()
  save_buckets(buckets)
  return out
elseif op == 'revive' then
  -- Retries a dead stage in place, since its (run, stage) pair holds one row: the entry's job,
  -- while it is still that dead row, becomes pending again as the upsert replaces a row (same
  -- id, claim sequence, task, payload, priority, retry budget, backoff, timeout, metadata,
  -- run, stage, version and group; attempt 0, stall count 0, run_at now, no worker, lease,
  -- start, finish, result, progress, cancel request or last error), and the entry goes. A revoked task
  -- refuses it, as it refuses an upsert. A stage re-enqueued since it died is not dead any
  -- more and is refused with `FLEXIQ_CONFLICT`, so a stale entry neither supersedes nor
  -- repeats newer work. Returns the id, or 0, writing nothing, when the job is not a stage row
  -- (a plain job, or a stage archived or deleted since): `dead.rs` then enqueues a new job.
  -- ARGV: op, now, dead id, job id.
  local at = ARGV[2]
  local now = tonumber(at)
  local dead_id, id = ARGV[3], ARGV[4]
  if redis.call('HEXISTS', B .. ':dlq', dead_id) == 0 then
    return redis.error_reply('FLEXIQ_NOTFOUND dead letter ' .. dead_id .. ' not found')
  end
  local o = load(id)
  local wf = redis.call('HMGET', B .. ':j:' .. id, 'wr', 'ws')
  if not o or not wf[1] then return 0 end
  if o.st ~= ST.dead then
    local status = tostring(o.st)
    for name, code in pairs(ST) do
      if code == o.st then status = name end
    end
    return redis.error_reply('FLEXIQ_CONFLICT dead letter ' .. dead_id .. ' names stage ' .. (wf[2] or '')
      .. ' of run ' .. wf[1] .. ', whose job ' .. id .. ' is ' .. status .. ' again, not dead')
  end
  if redis.call('SISMEMBER', B .. ':revoked', o.t) == 1 then
    return redis.error_reply('FLEXIQ_REVOKED ' .. o.t)
  end
  local n = { st = ST.pending, t = o.t, r = now, pr = o.pr }
  replace(id, o, { 'st', PENDING, 'a', '0', 'r', at }, { unpack(CLEARED) }, n, now)
  drop_dead(dead_id)
  flush()
  wake(now)
  return id
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
      local o = load(id)
      if o then
        drop_job(id, o, true)
        gone = gone + 1
      end
      run_drop(id, run, stage)
    end
  end
  flush()
  return gone
end
return redis.error_reply('FLEXIQ_INVALID unknown operation ' .. op)
