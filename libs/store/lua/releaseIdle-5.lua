--[[
  Ends a run (DESIGN §5, "stop"): if the agent's inbox is empty, patches its
  state (as updateState does) and releases its lease, all at once. Input
  appended before this runs is seen here (the run goes on); input appended
  after finds the lease free, so its producer takes it: no wakeup is lost.
  The active-agents index is a global key: the caller updates it afterwards.

  Input:
    KEYS[1] lease key           `{a:<a>}:lease`
    KEYS[2..4] inbox lanes      `{a:<a>}:inbox:<lane>` (immediate, normal, background)
    KEYS[5] state hash          `{a:<a>}:state`

    ARGV[1] expected lease value `<epoch>:<holder>`
    ARGV[2 ..] the state patch, as updateState's ARGV: n, n field/value pairs
               to set, fields to remove

  Output:
    1   released (state patched, lease deleted)
    0   inputs are pending (nothing changed)
    -1  the lease is not held under this value (nothing changed)
]]
--- @include "patchState"
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return -1
end
-- Acknowledged entries are deleted, so a lane's length is its pending count.
if redis.call("XLEN", KEYS[2]) + redis.call("XLEN", KEYS[3]) + redis.call("XLEN", KEYS[4]) > 0 then
  return 0
end
patchState(KEYS[5], ARGV, 2)
redis.call("DEL", KEYS[1])
return 1
