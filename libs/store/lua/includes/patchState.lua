--[[
  Patches an agent's state hash and keeps the active-agents set in step
  (included by updateState and releaseIdle).

    stateKey    `agent:<a>:state`
    activeKey   `agents:active`
    args[first]            agent name (member of the active-agents set)
    args[first + 1]        active: "1" add to the set, "0" remove from it, "" leave it
    args[first + 2]        n, the number of fields to set
    args[first + 3 ..]     n field/value pairs to set, then the fields to remove
]]
local function patchState(stateKey, activeKey, args, first)
  local n = tonumber(args[first + 2])
  local pairsFrom = first + 3
  if n > 0 then
    redis.call("HSET", stateKey, unpack(args, pairsFrom, pairsFrom + 2 * n - 1))
  end
  if #args >= pairsFrom + 2 * n then
    redis.call("HDEL", stateKey, unpack(args, pairsFrom + 2 * n, #args))
  end
  if args[first + 1] == "1" then
    redis.call("SADD", activeKey, args[first])
  elseif args[first + 1] == "0" then
    redis.call("SREM", activeKey, args[first])
  end
end
