--[[
  Stream ids (`<ms>-<seq>`) compared and padded (included by the workspace
  scripts). Both parts fit a Lua number exactly (ms < 2^53).
]]
local function splitId(id)
  local dash = string.find(id, "-", 1, true)
  return tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))
end

local function idAfter(a, b)
  local ams, aseq = splitId(a)
  local bms, bseq = splitId(b)
  return ams > bms or (ams == bms and aseq > bseq)
end

-- Zero-padded (20 digits each) so that ids sort as text in stream order.
local function paddedId(id)
  local dash = string.find(id, "-", 1, true)
  local ms, seq = string.sub(id, 1, dash - 1), string.sub(id, dash + 1)
  return string.rep("0", 20 - #ms) .. ms .. "-" .. string.rep("0", 20 - #seq) .. seq
end
