--[[
  Appends a post to a workspace channel and records an unread @mention for
  each mentioned member (the sender excluded). Mentions of names that are
  not members are returned, and the post is kept.

  Input:
    KEYS[1] state hash      `{w:<workflow>:<tag>}:state`
    KEYS[2] members hash    `{w:<workflow>:<tag>}:members`
    KEYS[3] channel stream  `{w:<workflow>:<tag>}:channel`
    KEYS[4] mentions zset   `{w:<workflow>:<tag>}:mentions`

    ARGV[1] the post's JSON up to its mentions: `{"from":…,"text":…,"at":…,"mentions":`
    ARGV[2] the sender
    ARGV[3] "1" when the sender must be a member (an agent), "0" for a tag from outside
    ARGV[4 ..] mentioned names (distinct, in order)

  Output:
    { entry id, { notified members }, { names that are not members } },
    -10 not running, -11 the sender is not a member
]]
--- @include "requireRunning"
--- @include "streamId"
if not isRunning(KEYS[1]) then
  return -10
end
local from = ARGV[2]
if ARGV[3] == "1" and redis.call("HEXISTS", KEYS[2], from) == 0 then
  return -11
end
local notified, unreached, quoted = {}, {}, {}
for i = 4, #ARGV do
  local name = ARGV[i]
  if name ~= from then
    if redis.call("HEXISTS", KEYS[2], name) == 1 then
      notified[#notified + 1] = name
      -- Names are [a-z0-9_-]: quoting needs no escapes.
      quoted[#quoted + 1] = '"' .. name .. '"'
    else
      unreached[#unreached + 1] = name
    end
  end
end
local id = redis.call("XADD", KEYS[3], "*", "e", ARGV[1] .. "[" .. table.concat(quoted, ",") .. "]}")
local padded = paddedId(id)
for _, name in ipairs(notified) do
  redis.call("ZADD", KEYS[4], 0, name .. ":" .. padded)
end
return { id, notified, unreached }
