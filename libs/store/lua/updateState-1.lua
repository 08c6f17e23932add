--[[
  Patches an agent's state hash in one command (HSET and HDEL together).
  The active-agents index is a global key: the caller updates it afterwards.

  Input:
    KEYS[1] state hash  `{a:<a>}:state`

    ARGV[1] n, the number of fields to set
    ARGV[2 .. 1+2n] field, value pairs to set
    ARGV[2+2n ..]   fields to remove

  Output:
    1
]]
--- @include "patchState"
patchState(KEYS[1], ARGV, 1)
return 1
