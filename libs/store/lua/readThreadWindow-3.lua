--[[
  Reads a thread as a run opens it: from its window start (the entries after
  the last compaction's `upTo`, the compaction entry itself and the turns it
  kept among them; the whole thread when it was never compacted), or the
  newest `limit` entries. The full history stays in the stream for recall.
  With a holder, only while that holder holds the agent's lease: a wake sends
  this right behind its lease attempt, and one that lost the race to another
  runner reads nothing. With `after`, only the entries after that one: a
  runner that kept the thread in memory brings its copy up to date.

  Input:
    KEYS[1] thread meta   `{a:<a>}:thread-meta:<ctx>` (hash, field windowAfter)
    KEYS[2] thread stream `{a:<a>}:thread:<ctx>`
    KEYS[3] lease key     `{a:<a>}:lease` (value `<epoch>:<holder>`)

    ARGV[1] holder, or "" to read whoever holds the lease
    ARGV[2] limit: "" for the window, else the newest this many entries
    ARGV[3] after: "" (window or limit), else an entry id: the entries after it

  Output: XRANGE's reply, { { id, { "e", json } }, ... }, newest last for a
  limit too; false (nil) when the holder does not hold the lease; 0 when
  `after` is no longer in the stream (deleted or trimmed: the copy is stale).
]]
if ARGV[1] ~= "" then
  -- The holder is everything after the epoch's colon (a holder id may contain colons itself).
  local lease = redis.call("GET", KEYS[3])
  local colon = lease and string.find(lease, ":", 1, true)
  if not colon or string.sub(lease, colon + 1) ~= ARGV[1] then
    return false
  end
end
if ARGV[3] ~= "" then
  if #redis.call("XRANGE", KEYS[2], ARGV[3], ARGV[3]) == 0 then
    return 0
  end
  return redis.call("XRANGE", KEYS[2], "(" .. ARGV[3], "+")
end
if ARGV[2] ~= "" then
  local newest = redis.call("XREVRANGE", KEYS[2], "+", "-", "COUNT", ARGV[2])
  local ordered = {}
  for i = #newest, 1, -1 do
    ordered[#ordered + 1] = newest[i]
  end
  return ordered
end
local after = redis.call("HGET", KEYS[1], "windowAfter")
if after then
  return redis.call("XRANGE", KEYS[2], "(" .. after, "+")
end
return redis.call("XRANGE", KEYS[2], "-", "+")
