--[[
  Stops a running workspace instance; its data stays (discardWorkspace removes
  it). Stopping an instance that is not running changes nothing.

  Input:
    KEYS[1] state hash `{w:<workflow>:<tag>}:state`

    ARGV[1] now (epoch ms)

  Output:
    1 stopped, 0 was not running
]]
if redis.call("HGET", KEYS[1], "status") ~= "running" then
  return 0
end
redis.call("HSET", KEYS[1], "status", "stopped", "stoppedAt", ARGV[1])
return 1
