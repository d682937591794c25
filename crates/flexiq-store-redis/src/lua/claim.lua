-- Claims up to `limit` runnable jobs across queues in one step: due delayed jobs are
-- promoted, paused queues skipped, each queue's concurrency cap and token bucket honoured, and
-- candidates ordered by priority (highest first), run_at, then id. A revoked task's jobs that
-- were already pending are claimed like any other: revocation only refuses new enqueues.
-- The claim step itself (`promote`, `allowance`, `take`, `save_buckets`) is `take.lua`'s,
-- shared with the fair claim of `workflow.lua`.
-- ARGV: now, limit, worker, nqueues, queue ...
local now = tonumber(ARGV[1])
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
    promote(q, now)
    local rd = B .. ':rd:' .. q
    local allow = allowance(q, limit, now, buckets)
    if allow > 0 then
      local got, start, scanned = 0, 0, 0
      while got < allow and scanned < 10 * limit + 100 do
        local want = allow - got
        local page = redis.call('ZRANGE', rd, start, start + want - 1, 'WITHSCORES')
        if #page == 0 then break end
        for k = 1, #page, 2 do
          local m = page[k]
          local r = rmem_at(m)
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
    return lt(a.m, b.m)
  end)
end
local out = {}
local at = ARGV[1]
for k = 1, math.min(limit, #cands) do
  local c = cands[k]
  local f = take(c.id, c.q, c.m, worker, at, buckets)
  if f then
    out[#out + 1] = c.id
    out[#out + 1] = f
  end
end
flush()
save_buckets(buckets)
return out
