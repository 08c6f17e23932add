--[[
  What the runner's reconciliation needs of one agent, in one command: how
  many inputs wait in its inbox (acknowledged entries are deleted, so a lane
  stream's length is its depth), the `state` field of its state hash, and
  how many undecodable entries wait in its quarantine stream for the DLQ.

  Input:
    KEYS[1..3] lane streams (immediate, normal, background)
    KEYS[4]    state hash  `{a:<a>}:state`
    KEYS[5]    quarantine stream `{a:<a>}:inbox-quarantine`

  Output:
    { inputs, state, quarantined }   state is nil when the hash has no `state` field
]]
return { redis.call("XLEN", KEYS[1]) + redis.call("XLEN", KEYS[2]) + redis.call("XLEN", KEYS[3]),
  redis.call("HGET", KEYS[4], "state"), redis.call("XLEN", KEYS[5]) }
