--[[
  Deletes every key of a workspace instance that is not running.

  Input:
    KEYS[1] state hash `{w:<workflow>:<tag>}:state`
    KEYS[2 .. 10] the instance's other keys (members, channel, seen, mentions,
                  docs, doc-meta, proposals, proposal-status, votes)

  Output:
    1 deleted (also when there was nothing), -19 the instance is running
]]
if redis.call("HGET", KEYS[1], "status") == "running" then
  return -19
end
redis.call("DEL", unpack(KEYS))
return 1
