--[[
  Deletes an agent's lane streams only if every one is empty, atomically: the
  last step of removing an agent's keys, so an input appended since its inbox
  was moved to the DLQ (a runner that had not heard of the removal yet) is
  never deleted with them.

  Input:
    KEYS[1..3] lane streams (immediate, normal, background)

  Output:
    1 deleted (or there was nothing); 0 an input waits: nothing deleted
]]
if redis.call("XLEN", KEYS[1]) + redis.call("XLEN", KEYS[2]) + redis.call("XLEN", KEYS[3]) > 0 then
  return 0
end
redis.call("DEL", KEYS[1], KEYS[2], KEYS[3])
return 1
