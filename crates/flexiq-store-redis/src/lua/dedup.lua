-- Dedup records, carried by the enqueue script and `small.lua` after the prelude. A record
-- `B:dd:<key>` holds the job holding the key (`jid`), that job's queue (`q`) and when the hold
-- lapses by itself (`exp`, Unix ms; absent: it holds while the holder is unfinished). The
-- holder's hash names the key in `dk`, so every path deleting the job drops the record with it
-- (the prelude's `dd_release`). What an enqueue does against a record is core's
-- `flexiq_core::dedup::plan_dedup`: Rust sends, per job, its verdict for every holder state
-- (`dd_plan`), so no rule of the modes is decided here.
local function dd_key(key) return B .. ':dd:' .. key end

-- The record of `key` (`jid`, `exp` as a number or nil, `q`) with its holder's status code
-- (`st`, live or archived; nil when the holder is gone), or nil when there is none.
local function dd_read(key)
  local r = redis.call('HMGET', dd_key(key), 'jid', 'exp', 'q')
  if not r[1] then return nil end
  return { jid = r[1], exp = r[2] and tonumber(r[2]) or nil, q = r[3], st = status_of(r[1]) }
end

-- The plan letter for a holder in status `st` (nil: no record, or its holder is gone) whose
-- hold lapses at `exp` (nil: none) at `now`. `tbl` is the job's verdict table from Rust
-- (`flexiq_core::dedup_table::plan_table`): three letters per holder slot, the slot of a gone holder first and
-- then one per status code, for a hold without expiry, one whose expiry is after `now` and
-- one whose expiry has come. Letters: 'i' insert, 'b' insert behind the holder, 'g' ignore,
-- 'e' ignore and extend, 'r' ignore and replace, 'x' ignore, extend and replace.
local function dd_plan(tbl, st, exp, now)
  local slot = st and st + 1 or 0
  local class = 0
  if exp then class = exp > now and 1 or 2 end
  local at = 3 * slot + class + 1
  return string.sub(tbl, at, at)
end

-- Writes record `rec` (`jid`, `q`, `exp`) of `key`.
local function dd_write(key, rec)
  local k = dd_key(key)
  if rec.exp then
    redis.call('HSET', k, 'jid', rec.jid, 'q', rec.q, 'exp', string.format('%d', rec.exp))
  else
    redis.call('HSET', k, 'jid', rec.jid, 'q', rec.q)
    redis.call('HDEL', k, 'exp')
  end
end
