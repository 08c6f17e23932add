--[[
  The body of appendThreadRelease and appendThreadReleaseIndexed: a turn's
  last write and the run's end in one fenced step. Appends entries (and acks)
  as appendThreadEntries does, then, when the agent's inbox is empty, patches
  its state (the idle record) and deletes the lease, as releaseIdle does.
  Input that landed before this runs is seen (nothing but the append is
  done, the run goes on); input appended after finds the lease free, so its
  producer takes it.

    KEYS    as appendThreadEntries
    ARGV    as appendThreadEntries, except that the state patch at the end
            (required) is the one written only when the run ends

  Returns -1 (LEASE_LOST, nothing written), else appendThreadEntries' list
  with the number of entries left in the inbox lanes at [n+1] and, at [n+2],
  1 when the state was patched and the lease released, 0 when input waits.
]]
local function appendThreadRelease(keys, argv)
  local count = tonumber(argv[2])
  local patchAt = 8 + 2 * count + 2 * tonumber(argv[4 + 2 * count])
  -- The entries and acks only: the state patch waits for the inbox check.
  local head = {}
  for i = 1, patchAt - 1 do
    head[i] = argv[i]
  end
  local ids = appendThreadEntries(keys, head)
  if ids == -1 then
    return ids
  end
  -- Acknowledged entries are deleted, so a lane's length is its pending count.
  local left = redis.call("XLEN", keys[6]) + redis.call("XLEN", keys[7]) + redis.call("XLEN", keys[8])
  ids[count + 1] = left
  if left > 0 then
    ids[count + 2] = 0
    return ids
  end
  patchState(keys[5], argv, patchAt)
  redis.call("DEL", keys[1])
  ids[count + 2] = 1
  return ids
end
