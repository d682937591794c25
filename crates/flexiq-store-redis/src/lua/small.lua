-- Small single-step operations that must not race: leases, setting compare-and-set,
-- partial results, log lines, dead-letter removal, the combined-index backfill, reading a
-- dedup record with its holder's status, pausing and resuming a queue (with their events) and
-- publishing a custom event. ARGV[1] names the operation.
local op = ARGV[1]
if op == 'pause' then
  -- ARGV: queue, now. A queue that was not paused writes a `paused` event. Returns 1 then,
  -- else 0.
  local q = ARGV[2]
  redis.call('SADD', B .. ':queues', q)
  local added = redis.call('SADD', B .. ':paused', q)
  if added == 1 then ev_add('paused', 'paused', nil, q, nil, nil, ARGV[3], '{}') end
  return added
elseif op == 'resume' then
  -- ARGV: queue, now. Leaves a wake-up token for the queue's blocked claimers; a queue that was
  -- paused writes a `resumed` event. Returns 1 then, else 0.
  local q = ARGV[2]
  redis.call('SADD', B .. ':queues', q)
  local removed = redis.call('SREM', B .. ':paused', q)
  redis.call('ZADD', B .. ':wake', 0, 'resume:' .. q)
  if removed == 1 then ev_add('resumed', 'resumed', nil, q, nil, nil, ARGV[3], '{}') end
  return removed
elseif op == 'publish' then
  -- ARGV: name, job id ('' for none), queue ('' for none), data (JSON), now. Returns the
  -- event's id, or 0 when the namespace has events switched off.
  local id = ev_add('custom', ARGV[2], ARGV[3], ARGV[4], nil, nil, ARGV[6], ARGV[5])
  return id or 0
elseif op == 'lease_acquire' then
  -- ARGV: name, holder, ttl_ms, now
  local k = B .. ':lease:' .. ARGV[2]
  local cur = redis.call('HMGET', k, 'h', 'x')
  local now = tonumber(ARGV[5])
  if (not cur[1]) or tonumber(cur[2]) <= now or cur[1] == ARGV[3] then
    redis.call('HSET', k, 'h', ARGV[3], 'x', now + tonumber(ARGV[4]))
    return 1
  end
  return 0
elseif op == 'lease_release' then
  local k = B .. ':lease:' .. ARGV[2]
  if redis.call('HGET', k, 'h') == ARGV[3] then
    redis.call('DEL', k)
    return 1
  end
  return 0
elseif op == 'setting_if' then
  -- KEYS[1] is the deployment base here. ARGV: key, has_expected ('0'/'1'), expected, value
  local k = B .. ':settings'
  local cur = redis.call('HGET', k, ARGV[2])
  local ok
  if ARGV[3] == '0' then ok = (cur == false) else ok = (cur == ARGV[4]) end
  if ok then
    redis.call('HSET', k, ARGV[2], ARGV[5])
    return 1
  end
  return 0
elseif op == 'partial' then
  -- ARGV: id, data, now
  local k = B .. ':j:' .. ARGV[2]
  if redis.call('EXISTS', k) == 0 then return -1 end
  local seq = redis.call('HINCRBY', k, 'ps', 1)
  redis.call('HSET', B .. ':part:' .. ARGV[2], 'd' .. seq, ARGV[3], 't' .. seq, ARGV[4])
  return seq
elseif op == 'log' then
  -- ARGV: id, json, now
  if redis.call('EXISTS', B .. ':j:' .. ARGV[2]) == 0 then return -1 end
  local seq = redis.call('INCR', B .. ':seq')
  redis.call('ZADD', B .. ':log:' .. ARGV[2], ARGV[4], pad(seq) .. '|' .. ARGV[3])
  redis.call('ZADD', B .. ':logix', 'NX', ARGV[4], ARGV[2])
  return 1
elseif op == 'delete_dead' then
  -- ARGV: dead id
  local id = ARGV[2]
  if redis.call('HEXISTS', B .. ':dlq', id) == 0 then return 0 end
  local t = redis.call('HGET', B .. ':dlqt', id)
  local m = redis.call('HGET', B .. ':dlqm', id)
  redis.call('HDEL', B .. ':dlq', id)
  redis.call('HDEL', B .. ':dlqt', id)
  redis.call('HDEL', B .. ':dlqm', id)
  redis.call('ZREM', B .. ':dlix', m)
  redis.call('ZREM', B .. ':dlt:' .. t, m)
  return 1
elseif op == 'purge_dead_task' then
  local t = ARGV[2]
  local ms = redis.call('ZRANGE', B .. ':dlt:' .. t, 0, -1)
  for _, m in ipairs(ms) do
    local id = string.sub(m, 18)
    redis.call('HDEL', B .. ':dlq', id)
    redis.call('HDEL', B .. ':dlqt', id)
    redis.call('HDEL', B .. ':dlqm', id)
    redis.call('ZREM', B .. ':dlix', m)
  end
  redis.call('DEL', B .. ':dlt:' .. t)
  return #ms
elseif op == 'dedup_hold' then
  -- ARGV: dedup key. Returns { holder id, expiry ('' for none), holder status code ('' when the
  -- holder is gone) }, or {} when the key has no record.
  local rec = dd_read(ARGV[2])
  if not rec then return {} end
  return { rec.jid, rec.exp and string.format('%d', rec.exp) or '', rec.st and tostring(rec.st) or '' }
elseif op == 'index_combined' then
  -- ARGV: id ... Adds each job to the combined status + queue and status + task indexes of
  -- the status it has now (what every status change maintains), for jobs written before them.
  local n = 0
  for k = 2, #ARGV do
    local id = ARGV[k]
    local f = redis.call('HMGET', B .. ':j:' .. id, 'st', 'q', 't', 'c')
    if f[1] then
      local m = pads(f[4]) .. '|' .. id
      redis.call('ZADD', ix_sq(f[1], f[2]), 0, m)
      redis.call('ZADD', ix_st(f[1], f[3]), 0, m)
      n = n + 1
    end
  end
  return n
end
return redis.error_reply('FLEXIQ_INVALID unknown operation ' .. op)
