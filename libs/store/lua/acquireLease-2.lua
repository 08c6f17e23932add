--[[
  Takes an agent's lease if nobody holds it, under a new fencing epoch.

  Input:
    KEYS[1] lease key  `{a:<a>}:lease` (value `<epoch>:<holder>`)
    KEYS[2] epoch key  `{a:<a>}:epoch` (only ever incremented)

    ARGV[1] holder id
    ARGV[2] TTL, milliseconds

  Output:
    the new epoch, or
    0 when the lease is held (by anyone, this holder included)
]]
if redis.call("EXISTS", KEYS[1]) == 1 then
  return 0
end
local epoch = redis.call("INCR", KEYS[2])
redis.call("SET", KEYS[1], epoch .. ":" .. ARGV[1], "PX", ARGV[2])
return epoch
