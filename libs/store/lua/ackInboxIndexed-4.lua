--[[
  ackInbox plus the pending-agents index: the agent leaves it when no entry
  is left. For a single Redis only (the index is a global key).

  Input:
    KEYS[1..3] lane streams (immediate, normal, background)
    KEYS[4] pending-agents index `agents:pending`

    ARGV[1] consumer group name
    ARGV[2] agent name
    ARGV[3..] pairs: lane index (1..3), entry id

  Output:
    the number of entries left in the three lanes
]]
--- @include "ackEntries"
local left = ackEntries(KEYS, ARGV[1], ARGV, 3)
if left == 0 then
  redis.call("SREM", KEYS[4], ARGV[2])
end
return left
