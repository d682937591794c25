-- Claims up to `limit` runnable jobs across queues in one step: due delayed jobs are
-- promoted, paused queues skipped, each queue's concurrency cap and token bucket honoured, and
-- candidates ordered by priority (highest first), run_at, then id. A revoked task's jobs that
-- were already pending are claimed like any other: revocation only refuses new enqueues.
-- The status change mirrors `flexiq_core::transition(Event::Claim)`: running, attempt + 1,
-- claim sequence + 1 (a hash without `cs` counts from its attempt, as `codec::claim_seq`
-- reads it), started_at = now.
-- ARGV: now, limit, worker, nqueues, queue ...
local now = tonumber(ARGV[1])
-- The running status code as stored (hash fields and index keys are strings).
local RUNNING = tostring(ST.running)
local limit = tonumber(ARGV[2])
local worker = ARGV[3]
local nq = tonumber(ARGV[4])
local queues
if nq == 0 then
  queues = redis.call('SMEMBERS', B .. ':queues')
else
  queues = { unpack(ARGV, 5, 4 + nq) }
end
local cands = {}
local sources = 0 -- queues that gave candidates
local buckets = {}
for _, q in ipairs(queues) do
  if redis.call('SISMEMBER', B .. ':paused', q) == 0 then
    local dy = B .. ':dy:' .. q
    local rd = B .. ':rd:' .. q
    local due = redis.call('ZRANGE', dy, '-inf', now, 'BYSCORE', 'LIMIT', 0, 1000)
    if #due > 0 then
      for _, id in ipairs(due) do
        local f = redis.call('HMGET', B .. ':j:' .. id, 'pr', 'r')
        if f[2] then redis.call('ZADD', rd, -tonumber(f[1]), rmem(tonumber(f[2]), id)) end
      end
      redis.call('ZREM', dy, unpack(due))
    end
    local allow = limit
    local cfg = redis.call('HMGET', B .. ':qc:' .. q, 'conc', 'rc', 'rp')
    if cfg[1] then
      local running = tonumber(redis.call('HGET', B .. ':cnt:' .. q, RUNNING) or '0')
      allow = math.min(allow, tonumber(cfg[1]) - running)
    end
    if cfg[2] and allow > 0 then
      local count, per = tonumber(cfg[2]), tonumber(cfg[3])
      local bk = redis.call('HMGET', B .. ':rb:' .. q, 'tk', 'ts')
      local tokens, ts = tonumber(bk[1] or count), tonumber(bk[2] or now)
      tokens = math.min(count, tokens + math.max(now - ts, 0) * count / per)
      buckets[q] = { tokens = tokens, ts = math.max(ts, now), used = 0 }
      allow = math.min(allow, math.floor(tokens))
    end
    if allow > 0 then
      local got, start, scanned = 0, 0, 0
      while got < allow and scanned < 10 * limit + 100 do
        local want = allow - got
        local page = redis.call('ZRANGE', rd, start, start + want - 1, 'WITHSCORES')
        if #page == 0 then break end
        for k = 1, #page, 2 do
          local m = page[k]
          local r = tonumber(string.sub(m, 1, 16))
          local id = string.sub(m, 18)
          if r <= now then
            if got == 0 then sources = sources + 1 end
            cands[#cands + 1] = { s = tonumber(page[k + 1]), m = m, id = id, q = q }
            got = got + 1
          end
          scanned = scanned + 1
        end
        start = start + want
      end
    end
  end
end
-- One queue's candidates are already in this order (its ready set's own order).
if sources > 1 then
  table.sort(cands, function(a, b)
    if a.s ~= b.s then return a.s < b.s end
    return a.m < b.m
  end)
end
-- Each claimed job is read once (every field, in JOB_FIELDS order) and returned with the
-- claim's changes applied, so the reply needs no second read and carries no field names.
local out = {}
local fields = { unpack(JOB_FIELDS) }
fields[#fields + 1] = 'v'
local at = ARGV[1]
local running, hb = B .. ':ix:s:' .. RUNNING, B .. ':hb'
for k = 1, math.min(limit, #cands) do
  local c = cands[k]
  local key = B .. ':j:' .. c.id
  local f = redis.call('HMGET', key, unpack(fields))
  local st = f[5]
  acc('ZREM', B .. ':rd:' .. c.q, c.m)
  if CLAIMABLE[tonumber(st)] then
    local a = string.format('%d', (tonumber(f[6]) or 0) + 1)
    local cs = string.format('%d', (tonumber(f[27]) or tonumber(f[6]) or 0) + 1)
    local ver = string.format('%d', (tonumber(f[28]) or 0) + 1)
    redis.call('HSET', key, 'st', RUNNING, 'sa', at, 'hb', at, 'w', worker, 'a', a, 'cs', cs, 'v', ver)
    local m = pads(f[10]) .. '|' .. c.id
    acc('ZREM', B .. ':ix:s:' .. st, m)
    acc('ZADD', running, '0', m)
    acc('ZREM', ix_sq(st, f[1]), m)
    acc('ZADD', ix_sq(RUNNING, f[1]), '0', m)
    acc('ZREM', ix_st(st, f[2]), m)
    acc('ZADD', ix_st(RUNNING, f[2]), '0', m)
    acc('ZADD', hb, at, c.id)
    local cnt = B .. ':cnt:' .. f[1]
    delta(cnt, st, -1)
    delta(cnt, RUNNING, 1)
    if buckets[c.q] then buckets[c.q].used = buckets[c.q].used + 1 end
    f[5], f[6], f[12], f[13], f[15], f[27], f[28] = RUNNING, a, at, at, worker, cs, nil
    out[#out + 1] = c.id
    out[#out + 1] = f
  end
end
flush()
for q, b in pairs(buckets) do
  redis.call('HSET', B .. ':rb:' .. q, 'tk', b.tokens - b.used, 'ts', b.ts)
end
return out
