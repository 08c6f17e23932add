--[[
  Appends entries to an agent's thread, fenced by the lease: a runner that
  lost its lease (expired, taken over) writes nothing. An input whose
  envelope id the thread already holds is skipped (exactly-once injection,
  whatever the caller's view of the thread). A compaction entry moves the
  thread's window start, so a loop can read the thread from there on
  (readThreadWindow) instead of its whole history. Under the same fence, it
  may also acknowledge inbox entries (the inputs just written: one round
  trip, and never an ack without the write) and patch the agent's state
  record (e.g. the step number with the step's assistant message).

  Input and output: see lua/includes/appendThreadEntries.lua. Emptying the
  inbox does not touch the pending-agents index (a global key): the caller
  does, on a cluster; on a single Redis appendThreadIndexed does it here.
]]
--- @include "patchState"
--- @include "appendThreadEntries"
return appendThreadEntries(KEYS, ARGV)
