--[[
  requeueInbox plus the pending-agents index. For a single Redis only.

  Input:
    KEYS[1] lease key `{a:<a>}:lease`
    KEYS[2] old lane stream
    KEYS[3] new lane stream
    KEYS[4] pending-agents index `agents:pending`

    ARGV[1] expected lease value `<epoch>:<holder>`
    ARGV[2] consumer group name
    ARGV[3] old entry id
    ARGV[4] new record JSON (stream field `e`)
    ARGV[5] agent name

  Output:
    the new stream entry id, or -1 (LEASE_LOST: nothing written)
]]
--- @include "requeueEntry"
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return -1
end
redis.call("SADD", KEYS[4], ARGV[5])
return requeueEntry(KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[4])
