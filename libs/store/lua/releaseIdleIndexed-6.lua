--[[
  releaseIdle plus the active-agents index, changed only when the run ends
  (released). For a single Redis only (the index is a global key).

  Input:
    KEYS[1] lease key           `{a:<a>}:lease`
    KEYS[2..4] inbox lanes      `{a:<a>}:inbox:<lane>` (immediate, normal, background)
    KEYS[5] state hash          `{a:<a>}:state`
    KEYS[6] active-agents index `agents:active`

    ARGV[1] expected lease value `<epoch>:<holder>`
    ARGV[2] index change: "+" (active), "-" (idle), "=" (unchanged)
    ARGV[3] agent name
    ARGV[4 ..] the state patch, as updateState's ARGV

  Output:
    as releaseIdle
]]
--- @include "patchState"
--- @include "markIndex"
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return -1
end
if redis.call("XLEN", KEYS[2]) + redis.call("XLEN", KEYS[3]) + redis.call("XLEN", KEYS[4]) > 0 then
  return 0
end
patchState(KEYS[5], ARGV, 4)
markIndex(KEYS[6], ARGV[2], ARGV[3])
redis.call("DEL", KEYS[1])
return 1
