--[[
  Acknowledges and deletes inbox entries (included by ackInbox and
  ackInboxIndexed).

    laneKeys      the three lane streams (immediate, normal, background)
    group         consumer group name
    args[first..] pairs: lane index (1..3), entry id
    returns the number of entries left in the three lanes
]]
local function ackEntries(laneKeys, group, args, first)
  for i = first, #args, 2 do
    local key = laneKeys[tonumber(args[i])]
    redis.call("XACK", key, group, args[i + 1])
    redis.call("XDEL", key, args[i + 1])
  end
  return redis.call("XLEN", laneKeys[1]) + redis.call("XLEN", laneKeys[2]) + redis.call("XLEN", laneKeys[3])
end
