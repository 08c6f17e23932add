--[[
  A sub-agent has ended (its report delivered, or it was canceled): its
  record becomes `ended` (a canceled one stays `canceled`) and is kept for
  inspection (EXPIRE). When the caller took it out of its parent's live set
  just now, its token use not rolled up yet is returned for the caller to add
  to the parent's `child-usage` (another agent's key: another slot), and
  counted as rolled up; a report recorded later adds only what it grew by
  (`recordReport-1.lua`).

  Input:
    KEYS[1] the child's record  `{a:<child>}:subagent`

    ARGV[1] '1' when the child left its parent's live set just now, else '0'
    ARGV[2] seconds the record is kept

  Output:
    { input tokens to roll up, output tokens to roll up }
]]
local key = KEYS[1]
if redis.call('EXISTS', key) == 0 then return { 0, 0 } end
if redis.call('HGET', key, 'status') ~= 'canceled' then
  redis.call('HSET', key, 'status', 'ended')
end
redis.call('EXPIRE', key, tonumber(ARGV[2]))
if ARGV[1] ~= '1' then return { 0, 0 } end
local function number(field)
  return tonumber(redis.call('HGET', key, field) or '0') or 0
end
local input, output = number('inputTokens'), number('outputTokens')
local growthInput = input - number('rolledInputTokens')
local growthOutput = output - number('rolledOutputTokens')
redis.call('HSET', key, 'rolledInputTokens', input, 'rolledOutputTokens', output)
return { growthInput, growthOutput }
