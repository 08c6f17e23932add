--[[
  Writes (or appends to) a shared document of a running workspace, within
  the size and count limits, optionally only if it is still at a version.

  Input:
    KEYS[1] state hash     `{w:<workflow>:<tag>}:state`
    KEYS[2] docs hash      `{w:<workflow>:<tag>}:docs`
    KEYS[3] doc-meta hash  `{w:<workflow>:<tag>}:doc-meta`

    ARGV[1] document name
    ARGV[2] text
    ARGV[3] "set" or "append"
    ARGV[4] writer, as JSON (a quoted string)
    ARGV[5] now (epoch ms)
    ARGV[6] max bytes of one document
    ARGV[7] max documents
    ARGV[8] expected version ("" for any; "0" for "must not exist")

  Output:
    { version, bytes }, -10 not running, -12 too large, -13 too many documents,
    { -14, current version } version conflict
]]
--- @include "requireRunning"
if not isRunning(KEYS[1]) then
  return -10
end
local name = ARGV[1]
local meta = redis.call("HGET", KEYS[3], name)
local version = 0
if meta then
  version = cjson.decode(meta).version
end
if ARGV[8] ~= "" and tonumber(ARGV[8]) ~= version then
  return { -14, version }
end
if not meta and redis.call("HLEN", KEYS[2]) >= tonumber(ARGV[7]) then
  return -13
end
local text = ARGV[2]
if ARGV[3] == "append" and meta then
  text = (redis.call("HGET", KEYS[2], name) or "") .. text
end
if #text > tonumber(ARGV[6]) then
  return -12
end
version = version + 1
redis.call("HSET", KEYS[2], name, text)
redis.call("HSET", KEYS[3], name,
  '{"version":' .. version .. ',"bytes":' .. #text .. ',"updatedBy":' .. ARGV[4] .. ',"updatedAt":' .. ARGV[5] .. "}")
return { version, #text }
