--[[
  Moves an inbox entry to the back of a lane (the same or another one) with
  its updated record, and acknowledges the old entry, atomically. The old
  entry may already be acknowledged; the new one is added either way.

  Input:
    KEYS[1] old lane stream
    KEYS[2] new lane stream

    ARGV[1] consumer group name
    ARGV[2] old entry id
    ARGV[3] new record JSON (stream field `e`)

  Output:
    the new stream entry id
]]
if redis.call("EXISTS", KEYS[1]) == 1 then
  redis.call("XACK", KEYS[1], ARGV[1], ARGV[2])
  redis.call("XDEL", KEYS[1], ARGV[2])
end
redis.pcall("XGROUP", "CREATE", KEYS[2], ARGV[1], "0", "MKSTREAM")
return redis.call("XADD", KEYS[2], "*", "e", ARGV[3])
