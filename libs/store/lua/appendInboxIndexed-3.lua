--[[
  appendInbox plus the pending-agents index in the same script: for a single
  Redis only (the index is a global key, in another slot on a cluster). The
  agent joins the index also for a duplicate, as appendInbox's caller does.

  Input:
    KEYS[1] dedupe key   `{a:<a>}:dedupe:<envelopeId>`
    KEYS[2] lane stream  `{a:<a>}:inbox:<lane>`
    KEYS[3] pending-agents index `agents:pending`

    ARGV[1] record JSON (stream field `e`)
    ARGV[2] consumer group name
    ARGV[3] dedupe TTL, seconds
    ARGV[4] agent name

  Output:
    as appendInbox
]]
--- @include "appendEntry"
redis.call("SADD", KEYS[3], ARGV[4])
return appendEntry(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
