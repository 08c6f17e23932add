--[[
  Reads a thread from its window start: the entries after the last
  compaction's `upTo` (the compaction entry itself and the turns it kept
  among them), or the whole thread when it was never compacted. The full
  history stays in the stream for recall.

  Input:
    KEYS[1] thread meta   `agent:<a>:thread:<ctx>:meta` (hash, field windowAfter)
    KEYS[2] thread stream `agent:<a>:thread:<ctx>`

  Output: XRANGE's reply, { { id, { "e", json } }, ... }
]]
local after = redis.call("HGET", KEYS[1], "windowAfter")
if after then
  return redis.call("XRANGE", KEYS[2], "(" .. after, "+")
end
return redis.call("XRANGE", KEYS[2], "-", "+")
