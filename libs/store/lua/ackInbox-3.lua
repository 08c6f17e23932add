--[[
  Acknowledges inbox entries: XACK + XDEL. Reports how many entries the
  agent's lanes still hold, so the caller can take the agent out of the
  pending-agents index (a global key, not touched here) when none are left.

  Input:
    KEYS[1..3] lane streams (immediate, normal, background)

    ARGV[1] consumer group name
    ARGV[2..] pairs: lane index (1..3), entry id

  Output:
    the number of entries left in the three lanes
]]
for i = 2, #ARGV, 2 do
  local key = KEYS[tonumber(ARGV[i])]
  redis.call("XACK", key, ARGV[1], ARGV[i + 1])
  redis.call("XDEL", key, ARGV[i + 1])
end
return redis.call("XLEN", KEYS[1]) + redis.call("XLEN", KEYS[2]) + redis.call("XLEN", KEYS[3])
