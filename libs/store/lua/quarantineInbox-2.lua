--[[
  Moves an inbox entry that could not be decoded, nor handed to the DLQ, out
  of its lane into the agent's quarantine stream, atomically: its fields as
  stored, with where it came from and why. The agent's inbox goes on without
  it; nothing of it is lost.

  Input:
    KEYS[1] lane stream             `{a:<a>}:inbox:<lane>`
    KEYS[2] quarantine stream       `{a:<a>}:inbox-quarantine`

    ARGV[1] consumer group name
    ARGV[2] entry id
    ARGV[3] reason

  Output:
    1 moved; 0 the entry was gone already
]]
local found = redis.call("XRANGE", KEYS[1], ARGV[2], ARGV[2])
if #found == 0 then
  return 0
end
local fields = { "lane", KEYS[1], "entry", ARGV[2], "reason", ARGV[3] }
for _, value in ipairs(found[1][2]) do
  fields[#fields + 1] = value
end
redis.call("XADD", KEYS[2], "*", unpack(fields))
redis.call("XACK", KEYS[1], ARGV[1], ARGV[2])
redis.call("XDEL", KEYS[1], ARGV[2])
return 1
