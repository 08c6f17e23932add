--[[
  Patches an agent's state hash and keeps the active-agents set in step, in
  one command (a MULTI of HSET, HDEL, SADD/SREM costs five).

  Input:
    KEYS[1] state hash          `agent:<a>:state`
    KEYS[2] active-agents set   `agents:active`

    ARGV[1] agent name (member of the active-agents set)
    ARGV[2] active: "1" add to the set, "0" remove from it, "" leave it
    ARGV[3] n, the number of fields to set
    ARGV[4 .. 3+2n] field, value pairs to set
    ARGV[4+2n ..]   fields to remove

  Output:
    1
]]
local n = tonumber(ARGV[3])
if n > 0 then
  redis.call("HSET", KEYS[1], unpack(ARGV, 4, 3 + 2 * n))
end
if #ARGV >= 4 + 2 * n then
  redis.call("HDEL", KEYS[1], unpack(ARGV, 4 + 2 * n, #ARGV))
end
if ARGV[2] == "1" then
  redis.call("SADD", KEYS[2], ARGV[1])
elseif ARGV[2] == "0" then
  redis.call("SREM", KEYS[2], ARGV[1])
end
return 1
