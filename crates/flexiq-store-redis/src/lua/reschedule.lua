-- Promotes a queue's delayed jobs in one step (`Reschedule::promote_jobs`): up to `count`
-- pending jobs of queue `q` due after `now`, soonest first (then id, the delayed set's own
-- order), get `run_at` = now and a new row version, and move from the delayed set to the
-- ready set with a wake-up token each. A suspended job shares the delayed set and is passed
-- over. Returns how many moved.
-- ARGV: queue, count, now
local q = ARGV[1]
local count = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local dy = B .. ':dy:' .. q
local done, offset = 0, 0
while done < count do
  -- Members leave the delayed set at `flush()`, so the scan pages past those already taken.
  local page = redis.call('ZRANGE', dy, '(' .. ARGV[3], '+inf', 'BYSCORE', 'LIMIT', offset, count - done)
  if #page == 0 then break end
  offset = offset + #page
  for _, id in ipairs(page) do
    local o = load(id)
    if o and o.st == ST.pending and o.r > now then
      local n = {}
      for k, v in pairs(o) do n[k] = v end
      n.r = now
      n.v = string.format('%d', (tonumber(o.v) or 0) + 1)
      redis.call('HSET', B .. ':j:' .. id, 'r', ARGV[3], 'v', n.v)
      reindex(id, o, n, now)
      done = done + 1
    end
  end
end
flush()
wake(now)
return done
