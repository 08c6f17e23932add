--[[
  appendInboxIndexed for an input in a workspace context: only while the
  instance runs and the agent plays one of its members (the ingest's
  membership check and the append in one round trip). The workspace's keys
  are in another slot than the agent's on a cluster: for a single Redis only
  (on a cluster the check is a read of its own before appendInbox).

  Input:
    KEYS[1] dedupe key   `{a:<a>}:dedupe:<envelopeId>`
    KEYS[2] lane stream  `{a:<a>}:inbox:<lane>`
    KEYS[3] pending-agents index `agents:pending`
    KEYS[4] state hash   `{w:<workflow>:<tag>}:state`
    KEYS[5] members hash `{w:<workflow>:<tag>}:members`

    ARGV[1] record JSON (stream field `e`)
    ARGV[2] consumer group name
    ARGV[3] dedupe TTL, seconds
    ARGV[4] agent name

  Output:
    as appendInbox; -10 the instance is not running, -11 the agent plays no member (nothing written)
]]
--- @include "appendEntry"
--- @include "requireRunning"
--- @include "memberAgent"
if not isRunning(KEYS[4]) then
  return -10
end
if not memberPlayedBy(redis.call("HGETALL", KEYS[5]), ARGV[4]) then
  return -11
end
redis.call("SADD", KEYS[3], ARGV[4])
return appendEntry(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
