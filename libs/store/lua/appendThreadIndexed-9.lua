--[[
  appendThread plus the pending-agents index: when its acks leave the
  agent's inbox empty, the agent leaves the index. For a single Redis only
  (the index is a global key).

  Input: appendThread's, and
    KEYS[9] pending-agents index `agents:pending`

  Output: appendThread's.
]]
--- @include "patchState"
--- @include "appendThreadEntries"
local ids = appendThreadEntries(KEYS, ARGV)
if ids ~= -1 and ids[#ids] == 0 then
  redis.call("SREM", KEYS[9], ARGV[6 + 2 * tonumber(ARGV[2])])
end
return ids
