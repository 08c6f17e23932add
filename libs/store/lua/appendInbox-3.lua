--[[
  Appends an inbound envelope to one lane of an agent's inbox, once.

  Input:
    KEYS[1] dedupe key          `dedupe:<envelopeId>`
    KEYS[2] lane stream         `agent:<a>:inbox:<lane>`
    KEYS[3] pending-agents set  `agents:pending`

    ARGV[1] record JSON (stream field `e`)
    ARGV[2] consumer group name
    ARGV[3] agent name (member of the pending-agents set)
    ARGV[4] dedupe TTL, seconds

  Output:
    the new stream entry id, or
    0 when the envelope id was seen before (duplicate: nothing written)
]]
if not redis.call("SET", KEYS[1], "1", "NX", "EX", ARGV[4]) then
  return 0
end
-- The group starts at 0 so it sees the entry added below; BUSYGROUP (it exists) is expected.
redis.pcall("XGROUP", "CREATE", KEYS[2], ARGV[2], "0", "MKSTREAM")
local id = redis.call("XADD", KEYS[2], "*", "e", ARGV[1])
redis.call("SADD", KEYS[3], ARGV[3])
return id
