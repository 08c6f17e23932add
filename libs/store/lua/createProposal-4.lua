--[[
  Creates a proposal in a running workspace; every current member is a voter.

  Input:
    KEYS[1] state hash            `{w:<workflow>:<tag>}:state`
    KEYS[2] members hash          `{w:<workflow>:<tag>}:members`
    KEYS[3] proposals hash        `{w:<workflow>:<tag>}:proposals`
    KEYS[4] proposal-status hash  `{w:<workflow>:<tag>}:proposal-status`

    ARGV[1] the proposal's JSON without id and voters: `{"title":…,"options":[…],"createdBy":…,"createdAt":…}`

  Output:
    the new proposal's JSON, -10 not running
]]
--- @include "requireRunning"
if not isRunning(KEYS[1]) then
  return -10
end
local id = "p" .. redis.call("HINCRBY", KEYS[1], "proposalSeq", 1)
local voters = redis.call("HKEYS", KEYS[2])
table.sort(voters)
local quoted = {}
for i, name in ipairs(voters) do
  quoted[i] = '"' .. name .. '"'
end
local json = '{"id":"' .. id .. '","voters":[' .. table.concat(quoted, ",") .. "]," .. string.sub(ARGV[1], 2)
redis.call("HSET", KEYS[3], id, json)
redis.call("HSET", KEYS[4], id, '{"status":"open"}')
return json
