--[[
  Appends an inbound envelope's record to one lane of an agent's inbox, once
  (included by appendInbox and appendInboxIndexed).

    dedupeKey `{a:<a>}:dedupe:<envelopeId>`, laneKey `{a:<a>}:inbox:<lane>`
    returns the new stream entry id, or 0 for a duplicate (nothing written)
]]
local function appendEntry(dedupeKey, laneKey, record, group, ttl)
  if not redis.call("SET", dedupeKey, "1", "NX", "EX", ttl) then
    return 0
  end
  -- The group starts at 0 so it sees the entry added below; BUSYGROUP (it exists) is expected.
  redis.pcall("XGROUP", "CREATE", laneKey, group, "0", "MKSTREAM")
  return redis.call("XADD", laneKey, "*", "e", record)
end
