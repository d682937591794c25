-- Moves terminal jobs finished before a cutoff out of the live structures ('archive': the
-- job hash is renamed into the archive and indexed by finish time for listings and by
-- archive time for retention) or deletes completed ones ('purge_completed', which frees the
-- dedup key a deleted job holds). Either way the job leaves its workflow run's index, freeing
-- its (run, stage) pair. A deleted job writes a `removed` event (an operator's purge); an
-- archived one writes none.
-- ARGV: cutoff, limit, now, mode. Returns how many jobs it moved or deleted.
local cutoff = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local mode = ARGV[4]
local n, offset = 0, 0
while n < limit do
  local ids = redis.call('ZRANGE', B .. ':fin', '-inf', '(' .. cutoff, 'BYSCORE', 'LIMIT', offset, limit - n)
  if #ids == 0 then break end
  for _, id in ipairs(ids) do
    local o = load(id)
    if not o then
      redis.call('ZREM', B .. ':fin', id)
    elseif mode == 'archive' or o.st == ST.completed then
      local m = pad(o.c) .. '|' .. id
      redis.call('ZREM', B .. ':ix:s:' .. o.st, m)
      redis.call('ZREM', ix_sq(o.st, o.q), m)
      redis.call('ZREM', ix_st(o.st, o.t), m)
      redis.call('ZREM', B .. ':ix:q:' .. o.q, m)
      redis.call('ZREM', B .. ':ix:t:' .. o.t, m)
      redis.call('HINCRBY', B .. ':cnt:' .. o.q, o.st, -1)
      redis.call('ZREM', B .. ':fin', id)
      local wf = redis.call('HMGET', B .. ':j:' .. id, 'wr', 'ws', 'dk')
      run_drop(id, wf[1], wf[2])
      if mode == 'archive' then
        local a = B .. ':a:' .. id
        redis.call('RENAME', B .. ':j:' .. id, a)
        redis.call('HSET', a, 'ar', now)
        redis.call('ZADD', B .. ':aix', 0, pad(o.f or now) .. '|' .. id)
        redis.call('ZADD', B .. ':aat', now, id)
      else
        ev_add('removed', 'removed', id, o.q, o.t, o.a, ARGV[3], '{}')
        dd_release(wf[3], id)
        redis.call('DEL', B .. ':j:' .. id, B .. ':part:' .. id)
      end
      n = n + 1
    else
      offset = offset + 1
    end
  end
end
return n
