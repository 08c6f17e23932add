--[[
  Patches an agent's state hash and keeps the active-agents set in step, in
  one command (a MULTI of HSET, HDEL, SADD/SREM costs five).

  Input:
    KEYS[1] state hash          `agent:<a>:state`
    KEYS[2] active-agents set   `agents:active`

    ARGV[1] agent name (member of the active-agents set)
    ARGV[2] active: "1" add to the set, "0" remove from it, "" leave it
    ARGV[3] n, the number of fields to set
    ARGV[4 .. 3+2n] field, value pairs to set
    ARGV[4+2n ..]   fields to remove

  Output:
    1
]]
--- @include "patchState"
patchState(KEYS[1], KEYS[2], ARGV, 1)
return 1
