--[[
  Appends an inbound envelope to one lane of an agent's inbox, once. The
  pending-agents index is not touched here (it is a global key, in another
  hash slot on a cluster): the caller adds the agent to it afterwards.

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
if not redis.call("SET", KEYS[1], "1", "NX", "EX", ARGV[3]) then
  return 0
end
-- The group starts at 0 so it sees the entry added below; BUSYGROUP (it exists) is expected.
redis.pcall("XGROUP", "CREATE", KEYS[2], ARGV[2], "0", "MKSTREAM")
return redis.call("XADD", KEYS[2], "*", "e", ARGV[1])
