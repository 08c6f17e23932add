--[[
  Whether a workspace instance is running (included by the workspace scripts
  that write: a stopped instance takes no posts, documents or votes).

    stateKey `{w:<workflow>:<tag>}:state`
]]
local function isRunning(stateKey)
  return redis.call("HGET", stateKey, "status") == "running"
end
