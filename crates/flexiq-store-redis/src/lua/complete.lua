-- Writes plain completions: acks whose effect `flexiq_core::transition` decided in Rust from
-- the fence they carry (completed now, lease cleared, a success metric, nothing else). A job
-- is written only while it is still running with that fence, so the decision holds; a job
-- that has dependents is left for the general path, which releases them. Each completion
-- writes its event (`completed`, named by `ev_change`, with the result's size).
-- ARGV: now, njobs, then per job: id, attempt, started_at, claim_seq, duration_ms, metric row
-- id, has_result ('0' / '1'), result. A hash without `cs` counts its attempt as its claim
-- sequence, as `codec::claim_seq` reads it.
-- Returns one code per job: 1 completed, 0 superseded, 2 left for the general path.
local at = ARGV[1]
local njobs = tonumber(ARGV[2])
-- The two status codes involved, as stored (hash fields and index keys are strings).
local RUNNING, COMPLETED = tostring(ST.running), tostring(ST.completed)
local running, done = B .. ':ix:s:' .. RUNNING, B .. ':ix:s:' .. COMPLETED
local hb, fin, metrics = B .. ':hb', B .. ':fin', B .. ':metrics'
-- A batch's jobs mostly share a few task and queue names: each is encoded once.
local encoded = {}
local function json(name)
  local e = encoded[name]
  if not e then
    e = cjson.encode(name)
    encoded[name] = e
  end
  return e
end
-- A completion event's data values, refilled for each job (`ev_change` reads them at once).
local done_ev = {}
local out = {}
local i = 3
for k = 1, njobs do
  local id = ARGV[i]
  local key = B .. ':j:' .. id
  local v = redis.call('HMGET', key, 'st', 'a', 'sa', 'v', 'q', 't', 'c', 'u', 'cs')
  if v[1] ~= RUNNING or tonumber(v[2]) ~= tonumber(ARGV[i + 1]) or tonumber(v[3]) ~= tonumber(ARGV[i + 2])
    or tonumber(v[9] or v[2]) ~= tonumber(ARGV[i + 3]) then
    out[k] = 0
  elseif redis.call('EXISTS', B .. ':dep:' .. id) == 1 then
    out[k] = 2
  else
    local ver = string.format('%d', (tonumber(v[4]) or 0) + 1)
    if ARGV[i + 6] == '1' then
      redis.call('HSET', key, 'st', COMPLETED, 'f', at, 'v', ver, 'res', ARGV[i + 7])
    else
      redis.call('HSET', key, 'st', COMPLETED, 'f', at, 'v', ver)
    end
    redis.call('HDEL', key, 'w', 'hb')
    local m = pads(v[7]) .. '|' .. id
    acc('ZREM', running, m)
    acc('ZADD', done, '0', m)
    acc('ZREM', ix_sq(RUNNING, v[5]), m)
    acc('ZADD', ix_sq(COMPLETED, v[5]), '0', m)
    acc('ZREM', ix_st(RUNNING, v[6]), m)
    acc('ZADD', ix_st(COMPLETED, v[6]), '0', m)
    acc('ZREM', hb, id)
    acc('ZADD', fin, at, id)
    local cnt = B .. ':cnt:' .. v[5]
    delta(cnt, RUNNING, -1)
    delta(cnt, COMPLETED, 1)
    if v[8] and redis.call('HGET', B .. ':uniq', v[8]) == id then
      redis.call('HDEL', B .. ':uniq', v[8])
    end
    acc('ZADD', metrics, at, ARGV[i + 5] .. '|{"job_id":"' .. id .. '","task":' .. json(v[6])
      .. ',"queue":' .. json(v[5]) .. ',"attempt":' .. v[2] .. ',"success":true,"duration_ms":'
      .. ARGV[i + 4] .. ',"recorded_at":' .. at .. '}')
    if ev_on() then
      local a = tonumber(v[2])
      done_ev.result_size = ARGV[i + 6] == '1' and #ARGV[i + 7] or 0
      ev_change(id, v[5], v[6], ST.running, ST.completed, a, a, false, at, done_ev)
    end
    out[k] = 1
  end
  i = i + 8
end
flush()
return out
