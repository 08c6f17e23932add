--[[
  Moves an inbox entry to the back of a lane with its updated record
  (included by requeueInbox and requeueInboxIndexed).

    oldLane, newLane  lane streams; group: consumer group name
    returns the new stream entry id
]]
local function requeueEntry(oldLane, newLane, group, oldId, record)
  if redis.call("EXISTS", oldLane) == 1 then
    redis.call("XACK", oldLane, group, oldId)
    redis.call("XDEL", oldLane, oldId)
  end
  redis.pcall("XGROUP", "CREATE", newLane, group, "0", "MKSTREAM")
  return redis.call("XADD", newLane, "*", "e", record)
end
