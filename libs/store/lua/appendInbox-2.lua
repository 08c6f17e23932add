--[[
  Appends an inbound envelope to one lane of an agent's inbox, once. The
  pending-agents index is not touched here (it is a global key, in another
  hash slot on a cluster): the caller adds the agent to it afterwards. On a
  single Redis, appendInboxIndexed does both in one script.

  Input:
    KEYS[1] dedupe key   `{a:<a>}:dedupe:<envelopeId>`
    KEYS[2] lane stream  `{a:<a>}:inbox:<lane>`

    ARGV[1] record JSON (stream field `e`)
    ARGV[2] consumer group name
    ARGV[3] dedupe TTL, seconds

  Output:
    the new stream entry id, or
    0 when the envelope id was seen before (duplicate: nothing written)
]]
--- @include "appendEntry"
return appendEntry(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
