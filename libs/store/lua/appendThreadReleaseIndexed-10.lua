--[[
  appendThreadRelease plus the global index sets, for a single Redis only:
  when its acks leave the inbox empty, the agent leaves the pending-agents
  index; when the run ends (released), the state patch's index change moves
  it in or out of the active-agents index.

  Input: appendThreadRelease's, and
    KEYS[9]  pending-agents index `agents:pending`
    KEYS[10] active-agents index  `agents:active`

  Output: appendThreadRelease's.
]]
--- @include "patchState"
--- @include "markIndex"
--- @include "appendThreadEntries"
--- @include "appendThreadRelease"
local ids = appendThreadRelease(KEYS, ARGV)
if ids == -1 then
  return ids
end
local count = tonumber(ARGV[2])
local agent = ARGV[6 + 2 * count]
if tonumber(ARGV[4 + 2 * count]) > 0 and ids[count + 1] == 0 then
  redis.call("SREM", KEYS[9], agent)
end
if ids[count + 2] == 1 then
  markIndex(KEYS[10], ARGV[7 + 2 * count], agent)
end
return ids
