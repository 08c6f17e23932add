--[[
  A sub-agent's report, recorded on its record: the first report's envelope
  id is kept (a runner that takes a crashed child over sends it again under
  the same id), the child's token use (its thread's, all of it) is stored,
  and the status becomes `reported` unless the child was removed (`ended`)
  or canceled. A child removed already (its parent took a report before this
  one, on a follow-up) has what it spent since rolled up into its parent's
  figures: the growth since the last roll-up is returned for the caller to
  add to the parent's `child-usage` (another agent's key: another slot), and
  counted as rolled up. Sending a report again adds nothing.

  Input:
    KEYS[1] the child's record  `{a:<child>}:subagent`

    ARGV[1] the report's envelope id
    ARGV[2] input tokens of the child's thread
    ARGV[3] output tokens of the child's thread

  Output:
    { the first report's id, input growth, output growth }, or nil when the
    record is gone
]]
local key = KEYS[1]
if redis.call('EXISTS', key) == 0 then return nil end
redis.call('HSETNX', key, 'reportId', ARGV[1])
local function number(field)
  return tonumber(redis.call('HGET', key, field) or '0') or 0
end
-- A thread that got shorter (compacted) reads less: the figure never goes down.
local input = math.max(number('inputTokens'), tonumber(ARGV[2]))
local output = math.max(number('outputTokens'), tonumber(ARGV[3]))
redis.call('HSET', key, 'inputTokens', input, 'outputTokens', output)
local status = redis.call('HGET', key, 'status')
local growthInput, growthOutput = 0, 0
if status == 'ended' then
  growthInput = input - number('rolledInputTokens')
  growthOutput = output - number('rolledOutputTokens')
  redis.call('HSET', key, 'rolledInputTokens', input, 'rolledOutputTokens', output)
elseif status ~= 'canceled' then
  redis.call('HSET', key, 'status', 'reported')
end
return { redis.call('HGET', key, 'reportId'), growthInput, growthOutput }
