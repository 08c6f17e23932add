--[[
  The body of appendThread and appendThreadIndexed: appends entries to an
  agent's thread, fenced by the lease, then (same fence) acknowledges the
  inbox entries the caller names and patches the agent's state.

    KEYS[1] lease key        `{a:<a>}:lease`
    KEYS[2] thread stream    `{a:<a>}:thread:<ctx>`
    KEYS[3] thread envelopes `{a:<a>}:thread-envelopes:<ctx>` (set)
    KEYS[4] thread meta      `{a:<a>}:thread-meta:<ctx>` (hash)
    KEYS[5] state hash       `{a:<a>}:state`
    KEYS[6..8] inbox lane streams (immediate, normal, background)

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
    ARGV[4+2n] m, the number of inbox entries to acknowledge (0: none)
    ARGV[5+2n] the inbox consumer group
    ARGV[6+2n] the agent's name (for the index sets)
    ARGV[7+2n] the active-agents index change of the state patch: "+", "-"
            or "=" (used by appendThreadIndexed only)
    ARGV[8+2n ..] m pairs: lane index (1..3), inbox entry id
    ARGV[8+2n+2m ..] optional: a state patch, as updateState's ARGV (absent:
            the state is not written)

  Returns -1 (LEASE_LOST) when the fence no longer holds the lease (nothing
  written), else { id or 0 per entry (0: a skipped duplicate input), then
  the number of entries left in the inbox lanes (-1 when m is 0) }.
]]
local function appendThreadEntries(keys, argv)
  if redis.call("GET", keys[1]) ~= argv[1] then
    return -1
  end
  local count = tonumber(argv[2])
  local ids = {}
  for i = 1, count do
    local json = argv[1 + 2 * i]
    local envelope = argv[2 + 2 * i]
    if string.sub(envelope, 1, 1) == "+" then
      redis.call("SADD", keys[3], string.sub(envelope, 2))
      ids[i] = redis.call("XADD", keys[2], "*", "e", json)
    elseif envelope ~= "" then
      local added = 0
      for id in string.gmatch(envelope, "[^\n]+") do
        added = added + redis.call("SADD", keys[3], id)
      end
      if added == 0 then
        ids[i] = 0
      else
        ids[i] = redis.call("XADD", keys[2], "*", "e", json)
      end
    else
      ids[i] = redis.call("XADD", keys[2], "*", "e", json)
    end
  end
  local window = argv[3 + 2 * count]
  if window ~= "" then
    redis.call("HSET", keys[4], "windowAfter", window)
  end
  -- The acks come after the entries, in the same script: an input is acknowledged only once it is in the thread.
  local acks = tonumber(argv[4 + 2 * count])
  local group = argv[5 + 2 * count]
  local first = 8 + 2 * count
  ids[count + 1] = -1
  if acks > 0 then
    for i = first, first + 2 * acks - 1, 2 do
      local lane = keys[5 + tonumber(argv[i])]
      redis.call("XACK", lane, group, argv[i + 1])
      redis.call("XDEL", lane, argv[i + 1])
    end
    ids[count + 1] = redis.call("XLEN", keys[6]) + redis.call("XLEN", keys[7]) + redis.call("XLEN", keys[8])
  end
  local state = first + 2 * acks
  if #argv >= state then
    patchState(keys[5], argv, state)
  end
  return ids
end
