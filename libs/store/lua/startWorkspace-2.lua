--[[
  Starts a workspace instance: marks it running and sets its members. Starting
  a running instance changes nothing (start is idempotent). A stopped, kept
  instance keeps its channel, documents and proposals and gets the members
  given now (the workflow file may have changed).

  Input:
    KEYS[1] state hash    `{w:<workflow>:<tag>}:state`
    KEYS[2] members hash  `{w:<workflow>:<tag>}:members`

    ARGV[1] now (epoch ms)
    ARGV[2 ..] member name, member JSON pairs

  Output:
    1 started, 0 already running
]]
if redis.call("HGET", KEYS[1], "status") == "running" then
  return 0
end
redis.call("HSETNX", KEYS[1], "createdAt", ARGV[1])
redis.call("HSET", KEYS[1], "status", "running", "startedAt", ARGV[1])
redis.call("HDEL", KEYS[1], "stoppedAt")
redis.call("DEL", KEYS[2])
if #ARGV > 1 then
  redis.call("HSET", KEYS[2], unpack(ARGV, 2, #ARGV))
end
return 1
