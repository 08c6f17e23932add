--[[
  Appends a post to a workspace channel and records an unread @mention for
  each mentioned member (the sender excluded). Mentions of names that are
  not members are returned, and the post is kept. Returns the agent of each
  notified member too, so the caller pushes their inputs without another
  read of the members.

  The sender is a member name, a tag from outside (`http:bob`), or an agent:
  then the member that agent plays is the sender (the membership check of a
  tool call, in the same step as the post: the `channel_send` tool).

  Input:
    KEYS[1] state hash      `{w:<workflow>:<tag>}:state`
    KEYS[2] members hash    `{w:<workflow>:<tag>}:members`
    KEYS[3] channel stream  `{w:<workflow>:<tag>}:channel`
    KEYS[4] mentions zset   `{w:<workflow>:<tag>}:mentions`

    ARGV[1] the post's JSON after its sender, up to its mentions: `,"text":…,"at":…,"mentions":`
    ARGV[2] the sender: a member name, a tag, or an agent
    ARGV[3] "member" (ARGV[2] must be a member), "tag" (from outside) or "agent" (a member's agent)
    ARGV[4] the sender as JSON (`"http:bob"`), or "" for "agent" (a member name needs no escapes)
    ARGV[5 ..] mentioned names (distinct, in order)

  Output:
    { entry id, the sender, { notified members }, { their agents }, { names that are not members } },
    -10 not running, -11 the sender is not a member (no member is played by the agent)
]]
--- @include "requireRunning"
--- @include "streamId"
--- @include "memberAgent"
if not isRunning(KEYS[1]) then
  return -10
end
local from = ARGV[2]
if ARGV[3] == "member" and redis.call("HEXISTS", KEYS[2], from) == 0 then
  return -11
end
if ARGV[3] == "agent" then
  from = memberPlayedBy(redis.call("HGETALL", KEYS[2]), from)
  if not from then
    return -11
  end
end
local notified, agents, unreached, quoted = {}, {}, {}, {}
for i = 5, #ARGV do
  local name = ARGV[i]
  if name ~= from then
    local json = redis.call("HGET", KEYS[2], name)
    if json then
      notified[#notified + 1] = name
      agents[#agents + 1] = agentOf(json, name)
      -- Names are [a-z0-9_-]: quoting needs no escapes.
      quoted[#quoted + 1] = '"' .. name .. '"'
    else
      unreached[#unreached + 1] = name
    end
  end
end
local sender = ARGV[3] == "agent" and ('"' .. from .. '"') or ARGV[4]
local entry = '{"from":' .. sender .. ARGV[1] .. "[" .. table.concat(quoted, ",") .. "]}"
local id = redis.call("XADD", KEYS[3], "*", "e", entry)
local padded = paddedId(id)
for _, name in ipairs(notified) do
  redis.call("ZADD", KEYS[4], 0, name .. ":" .. padded)
end
return { id, from, notified, agents, unreached }
