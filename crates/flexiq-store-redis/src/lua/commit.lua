-- Applies a plan computed in Rust by `flexiq_core::transition`: every job op carries the
-- version it was read at, and nothing is written unless every version still matches.
-- Status changes write their events through `reindex`; the plan's own events (progress) are
-- written after the raw commands.
-- ARGV: now, nops, then per op: kind ('w' write / 'g' guard), id, version, nset, k, v, ...,
-- ndel, k, ...; then nraw, then per raw command: argc, args ...; then nevents, then per event:
-- kind, job id, queue, task, attempt, data (JSON).
local now = tonumber(ARGV[1])
local nops = tonumber(ARGV[2])
local i = 3
local ops = {}
local stale = {}
for _ = 1, nops do
  local op = { kind = ARGV[i], id = ARGV[i + 1], v = ARGV[i + 2] }
  local nset = tonumber(ARGV[i + 3])
  op.set_at = i + 4
  op.nset = nset
  i = i + 4 + 2 * nset
  local ndel = tonumber(ARGV[i])
  op.del_at = i + 1
  op.ndel = ndel
  i = i + 1 + ndel
  op.o = load(op.id)
  if not op.o or op.o.v ~= op.v then stale[#stale + 1] = op.id end
  ops[#ops + 1] = op
end
if #stale > 0 then
  return { 'STALE', unpack(stale) }
end
-- The fields `load` returns, and which of them are numbers.
local NUMERIC = { st = true, c = true, r = true, pr = true, hb = true, sa = true, f = true, a = true,
  sc = true }
local LOADED = { q = true, t = true, u = true, v = true }
-- Fields an event's data reads, kept on the row as `ev_status` takes them (the result as its
-- size).
local SEEN = { w = 'w', e = 'e' }
local written = {}
for _, op in ipairs(ops) do
  if op.kind == 'w' then
    local key = B .. ':j:' .. op.id
    local o = written[op.id] or op.o
    local n = {}
    for k, v in pairs(o) do n[k] = v end
    local set = { unpack(ARGV, op.set_at, op.set_at + 2 * op.nset - 1) }
    for k = 1, #set, 2 do
      local name = set[k]
      if NUMERIC[name] then
        n[name] = tonumber(set[k + 1])
      elseif LOADED[name] then
        n[name] = set[k + 1]
      elseif SEEN[name] then
        n[SEEN[name]] = set[k + 1]
      elseif name == 'res' then
        n.rsz = #set[k + 1]
      end
    end
    n.v = string.format('%d', tonumber(o.v) + 1)
    set[#set + 1] = 'v'
    set[#set + 1] = n.v
    redis.call('HSET', key, unpack(set))
    if op.ndel > 0 then
      redis.call('HDEL', key, unpack(ARGV, op.del_at, op.del_at + op.ndel - 1))
      for k = op.del_at, op.del_at + op.ndel - 1 do
        local name = ARGV[k]
        n[name] = nil
        if SEEN[name] then n[SEEN[name]] = false end
        if name == 'res' then n.rsz = 0 end
      end
    end
    reindex(op.id, o, n, now)
    written[op.id] = n
  end
end
local nraw = tonumber(ARGV[i])
i = i + 1
for _ = 1, nraw do
  local argc = tonumber(ARGV[i])
  redis.call(unpack(ARGV, i + 1, i + argc))
  i = i + 1 + argc
end
local nev = tonumber(ARGV[i])
i = i + 1
for _ = 1, nev do
  ev_add(ARGV[i], ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[1], ARGV[i + 5])
  i = i + 6
end
flush()
wake(now)
return { 'OK' }
