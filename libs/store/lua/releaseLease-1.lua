--[[
  Gives a lease up, only if this holder still holds it under this epoch
  (a stale runner must not delete its successor's lease).

  Input:
    KEYS[1] lease key  `{a:<a>}:lease`

    ARGV[1] expected value `<epoch>:<holder>`

  Output:
    1 released
    0 not held by this holder and epoch (nothing to do)
]]
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[1])
  return 1
end
return 0
