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
  -- A new lane gets its group, starting at 0 so it sees the entry added below. An existing lane is
  -- not asked again (a failing BUSYGROUP per input costs Redis more than EXISTS): a lane without the
  -- group (written by something else) gets it at its first read (readInbox).
  if redis.call("EXISTS", laneKey) == 0 then
    redis.call("XGROUP", "CREATE", laneKey, group, "0", "MKSTREAM")
  end
  return redis.call("XADD", laneKey, "*", "e", record)
end
