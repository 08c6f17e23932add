--[[
  Patches an agent's state hash (included by updateState and releaseIdle).

    stateKey            `{a:<a>}:state`
    args[first]         n, the number of fields to set
    args[first + 1 ..]  n field/value pairs to set, then the fields to remove
]]
local function patchState(stateKey, args, first)
  local n = tonumber(args[first])
  local pairsFrom = first + 1
  if n > 0 then
    redis.call("HSET", stateKey, unpack(args, pairsFrom, pairsFrom + 2 * n - 1))
  end
  if #args >= pairsFrom + 2 * n then
    redis.call("HDEL", stateKey, unpack(args, pairsFrom + 2 * n, #args))
  end
end
