--[[
  Moves an inbox entry to the back of a lane (the same or another one) with
  its updated record, and acknowledges the old entry, atomically, fenced by
  the lease: a runner that lost it re-queues nothing (the new holder decides
  what is resumed). The old entry may already be acknowledged; the new one is
  added either way. The caller keeps the agent in the pending-agents index (a
  global key); on a single Redis, requeueInboxIndexed does both in one script.

  Input:
    KEYS[1] lease key `{a:<a>}:lease`
    KEYS[2] old lane stream
    KEYS[3] new lane stream

    ARGV[1] expected lease value `<epoch>:<holder>`
    ARGV[2] consumer group name
    ARGV[3] old entry id
    ARGV[4] new record JSON (stream field `e`)

  Output:
    the new stream entry id, or -1 (LEASE_LOST: nothing written)
]]
--- @include "requeueEntry"
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return -1
end
return requeueEntry(KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[4])
