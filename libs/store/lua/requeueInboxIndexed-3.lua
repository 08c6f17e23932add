--[[
  requeueInbox plus the pending-agents index. For a single Redis only.

  Input:
    KEYS[1] old lane stream
    KEYS[2] new lane stream
    KEYS[3] pending-agents index `agents:pending`

    ARGV[1] consumer group name
    ARGV[2] old entry id
    ARGV[3] new record JSON (stream field `e`)
    ARGV[4] agent name

  Output:
    the new stream entry id
]]
--- @include "requeueEntry"
redis.call("SADD", KEYS[3], ARGV[4])
return requeueEntry(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
