--[[
  Acknowledges inbox entries: XACK + XDEL, and drops the agent from the
  pending-agents set when all its lanes are empty.

  Input:
    KEYS[1..3] lane streams (immediate, normal, background)
    KEYS[4]    pending-agents set

    ARGV[1] consumer group name
    ARGV[2] agent name
    ARGV[3..] pairs: lane index (1..3), entry id

  Output:
    the number of entries removed
]]
local removed = 0
for i = 3, #ARGV, 2 do
  local key = KEYS[tonumber(ARGV[i])]
  redis.call("XACK", key, ARGV[1], ARGV[i + 1])
  removed = removed + redis.call("XDEL", key, ARGV[i + 1])
end
if redis.call("XLEN", KEYS[1]) + redis.call("XLEN", KEYS[2]) + redis.call("XLEN", KEYS[3]) == 0 then
  redis.call("SREM", KEYS[4], ARGV[2])
end
return removed
