--[[
  Adds a tool-executor to the executors that started a background process in
  a workflow instance's context, while the instance runs: a `process start`
  that announces itself after the instance's stop (which read and deleted the
  set) recreates nothing, so nothing of a discarded instance stays.

  Input:
    KEYS[1] state hash `{w:<workflow>:<tag>}:state`
    KEYS[2] set `{w:<workflow>:<tag>}:process-executors`

    ARGV[1] the executor's id

  Output:
    1 added (or already there), 0 the instance is not running (nothing written)
]]
if redis.call("HGET", KEYS[1], "status") ~= "running" then
  return 0
end
redis.call("SADD", KEYS[2], ARGV[1])
return 1
