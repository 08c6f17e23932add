--[[
  Moves an inbox entry to the back of a lane (the same or another one) with
  its updated record, and acknowledges the old entry, atomically. The old
  entry may already be acknowledged; the new one is added either way. The
  caller keeps the agent in the pending-agents index (a global key); on a
  single Redis, requeueInboxIndexed does both in one script.

  Input:
    KEYS[1] old lane stream
    KEYS[2] new lane stream

    ARGV[1] consumer group name
    ARGV[2] old entry id
    ARGV[3] new record JSON (stream field `e`)

  Output:
    the new stream entry id
]]
--- @include "requeueEntry"
return requeueEntry(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
