--[[
  What a member's workspace cycle shows, read at once (read only): the
  membership of an agent (the instance runs, the agent plays a member), the
  members, the newest channel posts, the member's last-seen cursor, its
  oldest unread @mentions with their posts and how many there are, and the
  documents' metadata. One round trip where membership, then the reads, then
  the mentioned posts took three.

  Input:
    KEYS[1] state hash      `{w:<workflow>:<tag>}:state`
    KEYS[2] members hash    `{w:<workflow>:<tag>}:members`
    KEYS[3] channel stream  `{w:<workflow>:<tag>}:channel`
    KEYS[4] seen hash       `{w:<workflow>:<tag>}:seen`
    KEYS[5] mentions zset   `{w:<workflow>:<tag>}:mentions`
    KEYS[6] doc-meta hash   `{w:<workflow>:<tag>}:doc-meta`

    ARGV[1] the agent
    ARGV[2] how many of the newest posts (≥ 1)
    ARGV[3] how many of the oldest unread mentions (≥ 1)

  Output:
    { member name, members (HGETALL), newest posts (XREVRANGE), seen cursor or "",
      { mentioned posts, oldest first }, unread mentions, documents (HGETALL) },
    -10 not running, -11 the agent plays no member
]]
--- @include "requireRunning"
--- @include "memberAgent"
if not isRunning(KEYS[1]) then
  return -10
end
local members = redis.call("HGETALL", KEYS[2])
local member = memberPlayedBy(members, ARGV[1])
if not member then
  return -11
end
local newest = redis.call("XREVRANGE", KEYS[3], "+", "-", "COUNT", tonumber(ARGV[2]))
local seen = redis.call("HGET", KEYS[4], member) or ""
local from, to = "[" .. member .. ":", "(" .. member .. ";"
local padded = redis.call("ZRANGEBYLEX", KEYS[5], from, to, "LIMIT", 0, tonumber(ARGV[3]))
local unread = redis.call("ZLEXCOUNT", KEYS[5], from, to)
local mentioned = {}
for _, value in ipairs(padded) do
  -- `<member>:<ms padded>-<seq padded>` → `<ms>-<seq>`
  local ms, seq = string.match(string.sub(value, #member + 2), "^0*(%d-%d)%-0*(%d-%d)$")
  local entry = redis.call("XRANGE", KEYS[3], ms .. "-" .. seq, ms .. "-" .. seq)[1]
  if entry then
    mentioned[#mentioned + 1] = entry
  end
end
return { member, members, newest, seen, mentioned, unread, redis.call("HGETALL", KEYS[6]) }
