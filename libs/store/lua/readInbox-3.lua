--[[
  Reads every unacknowledged entry of an agent's inbox, lane by lane.

  One consumer name per agent: only the lease holder runs the loop, so a
  runner taking over after a crash reads as the same consumer and gets the
  entries the dead runner read but never acknowledged (its pending entries
  list, read from id 0) before the never-delivered ones (`>`).

  Input:
    KEYS[1..3] lane streams, in lane order (immediate, normal, background)

    ARGV[1] consumer group name
    ARGV[2] consumer name

  Output:
    { lane1, lane2, lane3 }, each a flat list { id, json, id, json, ... }
    in stream order (json is false when the entry has no `e` field)
]]
local function fieldOf(fields, name)
  if not fields then return false end
  for i = 1, #fields, 2 do
    if fields[i] == name then return fields[i + 1] end
  end
  return false
end

local function collect(out, reply, key)
  if not reply then return end
  for _, stream in ipairs(reply) do
    for _, entry in ipairs(stream[2]) do
      local fields = entry[2]
      if fields then
        out[#out + 1] = entry[1]
        out[#out + 1] = fieldOf(fields, "e")
      else
        -- Deleted while pending (should not happen: acks delete and acknowledge together).
        redis.call("XACK", key, ARGV[1], entry[1])
      end
    end
  end
end

local result = {}
for index, key in ipairs(KEYS) do
  local lane = {}
  if redis.call("EXISTS", key) == 1 then
    -- The appends create the group with the lane; a lane without it (written by something else)
    -- gets it here, from 0, so it delivers every entry: NOGROUP only then, not a BUSYGROUP per read.
    local pending = redis.pcall("XREADGROUP", "GROUP", ARGV[1], ARGV[2], "STREAMS", key, "0")
    if type(pending) == "table" and pending.err then
      redis.call("XGROUP", "CREATE", key, ARGV[1], "0")
      pending = redis.call("XREADGROUP", "GROUP", ARGV[1], ARGV[2], "STREAMS", key, "0")
    end
    collect(lane, pending, key)
    collect(lane, redis.call("XREADGROUP", "GROUP", ARGV[1], ARGV[2], "STREAMS", key, ">"), key)
  end
  result[index] = lane
end
return result
