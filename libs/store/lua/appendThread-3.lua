--[[
  Appends entries to an agent's thread, fenced by the lease: a runner that
  lost its lease (expired, taken over) writes nothing.

  Input:
    KEYS[1] lease key        `agent:<a>:lease`
    KEYS[2] thread stream    `agent:<a>:thread:<ctx>`
    KEYS[3] thread envelopes `agent:<a>:thread:<ctx>:envelopes` (set)

    ARGV[1] expected lease value `<epoch>:<holder>`
    ARGV[2] n, the number of entries
    ARGV[3 .. 2+n] entry JSON (stream field `e`), in order
    ARGV[3+n ..]   envelope ids of the input entries among them

  Output:
    { id, ... } the new stream ids, in order, or
    -1 (LEASE_LOST) the fence no longer holds the lease
]]
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return -1
end
local count = tonumber(ARGV[2])
local ids = {}
for i = 1, count do
  ids[i] = redis.call("XADD", KEYS[2], "*", "e", ARGV[2 + i])
end
for i = 3 + count, #ARGV do
  redis.call("SADD", KEYS[3], ARGV[i])
end
return ids
