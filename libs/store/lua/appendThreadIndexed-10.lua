--[[
  appendThread plus the global index sets, for a single Redis only (they
  are global keys): when its acks leave the agent's inbox empty, the agent
  leaves the pending-agents index; a state patch that changes `state` moves
  it in or out of the active-agents index.

  Input: appendThread's, and
    KEYS[9]  pending-agents index `agents:pending`
    KEYS[10] active-agents index  `agents:active`

  Output: appendThread's.
]]
--- @include "patchState"
--- @include "markIndex"
--- @include "appendThreadEntries"
local ids = appendThreadEntries(KEYS, ARGV)
if ids == -1 then
  return ids
end
local count = tonumber(ARGV[2])
local agent = ARGV[6 + 2 * count]
if ids[#ids] == 0 then
  redis.call("SREM", KEYS[9], agent)
end
markIndex(KEYS[10], ARGV[7 + 2 * count], agent)
return ids
