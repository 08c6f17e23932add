--[[
  Records a member's vote on an open proposal (a later vote replaces an
  earlier one) and closes the proposal when the rule says so:
  - an option voted for by more than half of the voters is decided at once;
  - once every voter has voted, the option with the most votes is decided,
    or the proposal is tied when two or more share the most.

  Input:
    KEYS[1] state hash            `{w:<workflow>:<tag>}:state`
    KEYS[2] proposals hash        `{w:<workflow>:<tag>}:proposals`
    KEYS[3] proposal-status hash  `{w:<workflow>:<tag>}:proposal-status`
    KEYS[4] votes hash            `{w:<workflow>:<tag>}:votes`

    ARGV[1] proposal id
    ARGV[2] voter (member name)
    ARGV[3] option
    ARGV[4] now (epoch ms)

  Output:
    { status JSON, votes cast, option, count, option, count, … } (every option),
    -10 not running, -15 unknown proposal, -16 closed, -17 not a voter, -18 unknown option
]]
--- @include "requireRunning"
if not isRunning(KEYS[1]) then
  return -10
end
local id, voter, option = ARGV[1], ARGV[2], ARGV[3]
local json = redis.call("HGET", KEYS[2], id)
if not json then
  return -15
end
local status = redis.call("HGET", KEYS[3], id)
if status ~= '{"status":"open"}' then
  return -16
end
local proposal = cjson.decode(json)
local isVoter, isOption = false, false
for _, name in ipairs(proposal.voters) do
  if name == voter then isVoter = true end
end
for _, name in ipairs(proposal.options) do
  if name == option then isOption = true end
end
if not isVoter then
  return -17
end
if not isOption then
  return -18
end
redis.call("HSET", KEYS[4], id .. ":" .. voter, option)
local counts, cast = {}, 0
for _, name in ipairs(proposal.voters) do
  local vote = redis.call("HGET", KEYS[4], id .. ":" .. name)
  if vote then
    counts[vote] = (counts[vote] or 0) + 1
    cast = cast + 1
  end
end
local n = #proposal.voters
local best, bestCount, shared = nil, -1, false
for _, name in ipairs(proposal.options) do
  local count = counts[name] or 0
  if count > bestCount then
    best, bestCount, shared = name, count, false
  elseif count == bestCount then
    shared = true
  end
end
if bestCount * 2 > n or (cast == n and not shared) then
  status = '{"status":"decided","result":' .. cjson.encode(best) .. ',"closedAt":' .. ARGV[4] .. "}"
  redis.call("HSET", KEYS[3], id, status)
elseif cast == n then
  status = '{"status":"tied","closedAt":' .. ARGV[4] .. "}"
  redis.call("HSET", KEYS[3], id, status)
end
local reply = { status, cast }
for _, name in ipairs(proposal.options) do
  reply[#reply + 1] = name
  reply[#reply + 1] = counts[name] or 0
end
return reply
