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
  -- As in appendEntry: the group with a new lane; a lane without one gets it at its first read.
  if redis.call("EXISTS", newLane) == 0 then
    redis.call("XGROUP", "CREATE", newLane, group, "0", "MKSTREAM")
  end
  return redis.call("XADD", newLane, "*", "e", record)
end
