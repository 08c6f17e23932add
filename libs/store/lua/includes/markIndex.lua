--[[
  Keeps an agent's membership of an index set (included by the *Indexed
  scripts that patch state): op "+" adds it, "-" removes it, anything else
  leaves the set as it is.
]]
local function markIndex(setKey, op, member)
  if op == "+" then
    redis.call("SADD", setKey, member)
  elseif op == "-" then
    redis.call("SREM", setKey, member)
  end
end
