--[[
  Extends a lease, only if this holder still holds it under this epoch.

  Input:
    KEYS[1] lease key  `{a:<a>}:lease`

    ARGV[1] expected value `<epoch>:<holder>`
    ARGV[2] TTL, milliseconds

  Output:
    1 renewed
    -1 (LEASE_LOST) the lease expired or belongs to someone else
]]
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
end
return -1
