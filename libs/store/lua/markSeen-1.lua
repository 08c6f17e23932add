--[[
  Moves a member's "last seen" channel cursor forward (never back).

  Input:
    KEYS[1] seen hash `{w:<workflow>:<tag>}:seen`

    ARGV[1] member name
    ARGV[2] channel entry id

  Output:
    the member's cursor after the call
]]
--- @include "streamId"
local current = redis.call("HGET", KEYS[1], ARGV[1])
if current and not idAfter(ARGV[2], current) then
  return current
end
redis.call("HSET", KEYS[1], ARGV[1], ARGV[2])
return ARGV[2]
