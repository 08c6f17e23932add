--[[
  updateState plus the active-agents index. For a single Redis only (the
  index is a global key).

  Input:
    KEYS[1] state hash  `{a:<a>}:state`
    KEYS[2] active-agents index `agents:active`

    ARGV[1] index change: "+" (active), "-" (idle), "=" (unchanged)
    ARGV[2] agent name
    ARGV[3 ..] the state patch, as updateState's ARGV

  Output:
    1
]]
--- @include "patchState"
--- @include "markIndex"
patchState(KEYS[1], ARGV, 3)
markIndex(KEYS[2], ARGV[1], ARGV[2])
return 1
