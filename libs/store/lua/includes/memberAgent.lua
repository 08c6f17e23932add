--[[
  Members of a workspace and the agents that play them (included by the
  workspace scripts that act for an agent). A member record is the JSON
  `{"agent":…,"kind":…,…}` stored by startWorkspace.
]]
-- The agent playing a member (the member's own name if the record has none).
local function agentOf(json, name)
  local ok, member = pcall(cjson.decode, json)
  if ok and type(member) == "table" and type(member.agent) == "string" then
    return member.agent
  end
  return name
end

-- The member `agent` plays (the first by name when it plays several) among
-- the members `flat` (HGETALL of the members hash), or nil.
local function memberPlayedBy(flat, agent)
  local found
  for i = 1, #flat, 2 do
    local name = flat[i]
    if (found == nil or name < found) and agentOf(flat[i + 1], name) == agent then
      found = name
    end
  end
  return found
end
