-- The events stream, carried by every script right after the generated header. One stream per
-- namespace, `B:ev`, written by the script that makes the change it reports, so a reader never
-- sees an event for a change that did not happen and never misses one that did. The stream id
-- is the event id. Every entry has the same eight fields in the same order (kind, name, job_id,
-- queue, task, attempt, at_ms, data; '' for none), so Redis stores the names once per stream
-- node. A namespace whose `B:evoff` key exists writes none: the switch is read once per script
-- call, by the first event it would write.
-- The state of one call (the stream key, the switch once read, the JSON already built) is set
-- by `ev_begin` at the start of every call: the library's code runs once, its functions on
-- every call.
local EV_KEY, EV_ON, EV_JSON, EV_ONE
local function ev_begin()
  EV_KEY = KEYS[1] .. ':ev'
  EV_ON = nil
  EV_JSON = {}
  EV_ONE = {}
end
local function ev_on()
  if EV_ON == nil then EV_ON = redis.call('EXISTS', KEYS[1] .. ':evoff') == 0 end
  return EV_ON
end

-- Appends one event: `name` is the kind's own name for a built-in kind; `id`, `q`, `t` and the
-- attempt `a` (a number or its decimal string) may be nil; `at` is the script's `now` as its
-- decimal string; `data` is JSON text. Returns the event's id (nil when events are off).
local function ev_add(kind, name, id, q, t, a, at, data)
  if not ev_on() then return nil end
  if type(a) == 'number' then a = string.format('%d', a) end
  return redis.call('XADD', EV_KEY, '*', 'kind', kind, 'name', name, 'job_id', id or '',
    'queue', q or '', 'task', t or '', 'attempt', a or '', 'at_ms', at, 'data', data)
end

-- `flexiq_core::events::status_event`: the kind a change of status code `from` (nil for a new
-- row) to `to` is reported as, the attempt going from `a0` to `a1` and `stalled` telling
-- whether the stall count rose; nil when the status stayed. First match in `EV_RULES` wins.
local function ev_kind(from, to, a0, a1, stalled)
  if from == nil then return 'enqueued' end
  if from == to then return nil end
  for _, r in ipairs(EV_RULES) do
    if r.to == to and (r.from == nil or r.from == from) then
      local w = r.when
      if w == 'a' or (w == 's' and stalled) or (w == 'g' and a1 < a0) or (w == 'f' and a1 == 0) then
        return r.kind
      end
    end
  end
  return nil
end

-- Data keys whose values are numbers (written as given when already a decimal string).
local EV_NUMERIC = { run_at = true, result_size = true }
-- `EV_JSON` holds the strings already encoded as JSON in this call (a batch repeats its
-- workers, statuses and errors); `EV_ONE` the data objects already built in this call for
-- kinds that carry one key, by kind and value (a claim's jobs share their worker, most
-- completions their result size).

-- The JSON of data value `x` of key `k`.
local function ev_value(k, x)
  if EV_NUMERIC[k] then
    if type(x) == 'number' then return string.format('%d', x) end
    return x
  end
  local e = EV_JSON[x]
  if not e then
    e = cjson.encode(x)
    EV_JSON[x] = e
  end
  return e
end

-- The data object of a status event of `kind`: the keys `EV_FIELDS` lists for it, valued from
-- `v` (`status`, `run_at`, `worker_id`, `result_size`, `error`); nil and false are left out.
local function ev_data(kind, v)
  local keys = EV_FIELDS[kind]
  if not keys then return '{}' end
  if #keys == 1 then
    local k = keys[1]
    local x = v[k]
    if x == nil or x == false then return '{}' end
    local memo = EV_ONE[kind]
    if not memo then
      memo = {}
      EV_ONE[kind] = memo
    end
    local d = memo[x]
    if not d then
      d = '{"' .. k .. '":' .. ev_value(k, x) .. '}'
      memo[x] = d
    end
    return d
  end
  local out = '{'
  for _, k in ipairs(keys) do
    local x = v[k]
    if x ~= nil and x ~= false then
      if out ~= '{' then out = out .. ',' end
      out = out .. '"' .. k .. '":' .. ev_value(k, x)
    end
  end
  return out .. '}'
end

-- Writes the event of a status change, when the change names one: job `id` of queue `q` and
-- task `t` went from status `from` (nil: new) to `to`, its attempt from `a0` to `a1`; `v`
-- holds its data values as `ev_data` reads them (`status` is filled in here).
local function ev_change(id, q, t, from, to, a0, a1, stalled, at, v)
  if not ev_on() then return end
  local kind = ev_kind(from, to, a0, a1, stalled)
  if not kind then return end
  v.status = ST_NAME[to]
  ev_add(kind, kind, id, q, t, a1, at, ev_data(kind, v))
end
