--[[
  Acknowledges inbox entries: XACK + XDEL. Reports how many entries the
  agent's lanes still hold, so the caller can take the agent out of the
  pending-agents index (a global key, not touched here) when none are left.
  On a single Redis, ackInboxIndexed does both in one script.

  Input:
    KEYS[1..3] lane streams (immediate, normal, background)

    ARGV[1] consumer group name
    ARGV[2..] pairs: lane index (1..3), entry id

  Output:
    the number of entries left in the three lanes
]]
--- @include "ackEntries"
return ackEntries(KEYS, ARGV[1], ARGV, 2)
