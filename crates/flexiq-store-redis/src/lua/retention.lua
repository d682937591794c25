-- Counts or deletes history rows older than a cutoff in one table (a purged archived job frees
-- the dedup key it holds).
-- ARGV: table, cutoff (Unix ms), mode ('count' or 'purge').
local tbl, cutoff, purge = ARGV[1], tonumber(ARGV[2]), ARGV[3] == 'purge'
local n = 0
if tbl == 'task_metrics' then
  if purge then
    n = redis.call('ZREMRANGEBYSCORE', B .. ':metrics', '-inf', '(' .. cutoff)
  else
    n = redis.call('ZCOUNT', B .. ':metrics', '-inf', '(' .. cutoff)
  end
elseif tbl == 'dead_letter' then
  local ms = redis.call('ZRANGE', B .. ':dlix', '-', '(' .. pad(cutoff), 'BYLEX')
  n = #ms
  if purge then
    for _, m in ipairs(ms) do
      local id = string.sub(m, 18)
      local t = redis.call('HGET', B .. ':dlqt', id)
      if t then redis.call('ZREM', B .. ':dlt:' .. t, m) end
      redis.call('HDEL', B .. ':dlq', id)
      redis.call('HDEL', B .. ':dlqt', id)
      redis.call('HDEL', B .. ':dlqm', id)
      redis.call('ZREM', B .. ':dlix', m)
    end
  end
elseif tbl == 'archived_jobs' then
  local ids = redis.call('ZRANGE', B .. ':aat', '-inf', '(' .. cutoff, 'BYSCORE')
  n = #ids
  if purge then
    for _, id in ipairs(ids) do
      local f = redis.call('HMGET', B .. ':a:' .. id, 'f', 'dk')
      if f[1] then redis.call('ZREM', B .. ':aix', pad(tonumber(f[1])) .. '|' .. id) end
      dd_release(f[2], id)
      redis.call('DEL', B .. ':a:' .. id, B .. ':part:' .. id)
      redis.call('ZREM', B .. ':aat', id)
    end
  end
else
  -- task_logs / job_errors: per-job sorted sets scored by time, and an index of jobs scored
  -- by their oldest row.
  local per = tbl == 'task_logs' and ':log:' or ':err:'
  local ix = B .. (tbl == 'task_logs' and ':logix' or ':errix')
  local jobs = redis.call('ZRANGE', ix, '-inf', '(' .. cutoff, 'BYSCORE')
  for _, id in ipairs(jobs) do
    local k = B .. per .. id
    if purge then
      n = n + redis.call('ZREMRANGEBYSCORE', k, '-inf', '(' .. cutoff)
      local first = redis.call('ZRANGE', k, 0, 0, 'WITHSCORES')
      if #first == 0 then
        redis.call('ZREM', ix, id)
      else
        redis.call('ZADD', ix, first[2], id)
      end
    else
      n = n + redis.call('ZCOUNT', k, '-inf', '(' .. cutoff)
    end
  end
end
return n
