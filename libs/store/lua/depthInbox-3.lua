--[[
  Counts an agent's pending inputs per lane in one command (acknowledged
  entries are deleted, so a lane stream's length is its depth).

  Input:
    KEYS[1..3] lane streams, in lane order (immediate, normal, background)

  Output:
    { immediate, normal, background }
]]
return { redis.call("XLEN", KEYS[1]), redis.call("XLEN", KEYS[2]), redis.call("XLEN", KEYS[3]) }
