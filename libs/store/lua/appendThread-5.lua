--[[
  Appends entries to an agent's thread, fenced by the lease: a runner that
  lost its lease (expired, taken over) writes nothing. An input whose
  envelope id the thread already holds is skipped (exactly-once injection,
  whatever the caller's view of the thread). A compaction entry moves the
  thread's window start, so a loop can read the thread from there on
  (readThreadWindow) instead of its whole history. It may also patch the
  agent's state record in the same fenced write (e.g. the step number with
  the step's assistant message): a runner that lost its lease writes neither.

  Input:
    KEYS[1] lease key        `{a:<a>}:lease`
    KEYS[2] thread stream    `{a:<a>}:thread:<ctx>`
    KEYS[3] thread envelopes `{a:<a>}:thread-envelopes:<ctx>` (set)
    KEYS[4] thread meta      `{a:<a>}:thread-meta:<ctx>` (hash)
    KEYS[5] state hash       `{a:<a>}:state`

    ARGV[1] expected lease value `<epoch>:<holder>`
    ARGV[2] n, the number of entries
    ARGV[1+2i], ARGV[2+2i] (i = 1..n) entry JSON (stream field `e`), and its
            envelope id: an input's, or a batched input's ids one per line
            (skipped only when the thread holds every one of them; all are
            recorded) ("" for entries that deliver no envelope),
            or `+<id>` for a tool result that carries an inbound envelope: it
            is always written, and its id is recorded in the same write so a
            later injection of that envelope is skipped
    ARGV[3+2n] the window start to record (the last compaction's `upTo`), or ""
    ARGV[4+2n ..] optional: a state patch, as updateState's ARGV (absent: the
            state is not written)

  Output:
    { id or 0, ... } per entry in order: its new stream id, or 0 when it was
    skipped as a duplicate input; or -1 (LEASE_LOST) the fence no longer
    holds the lease
]]
--- @include "patchState"
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return -1
end
local count = tonumber(ARGV[2])
local ids = {}
for i = 1, count do
  local json = ARGV[1 + 2 * i]
  local envelope = ARGV[2 + 2 * i]
  if string.sub(envelope, 1, 1) == "+" then
    redis.call("SADD", KEYS[3], string.sub(envelope, 2))
    ids[i] = redis.call("XADD", KEYS[2], "*", "e", json)
  elseif envelope ~= "" then
    local added = 0
    for id in string.gmatch(envelope, "[^\n]+") do
      added = added + redis.call("SADD", KEYS[3], id)
    end
    if added == 0 then
      ids[i] = 0
    else
      ids[i] = redis.call("XADD", KEYS[2], "*", "e", json)
    end
  else
    ids[i] = redis.call("XADD", KEYS[2], "*", "e", json)
  end
end
local window = ARGV[3 + 2 * count]
if window ~= nil and window ~= "" then
  redis.call("HSET", KEYS[4], "windowAfter", window)
end
if #ARGV >= 4 + 2 * count then
  patchState(KEYS[5], ARGV, 4 + 2 * count)
end
return ids
