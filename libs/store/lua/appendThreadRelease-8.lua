--[[
  A turn's last thread write and the run's end in one round trip (the
  step's last tool result when a final `message` ended the turn): appends
  entries as appendThread does, fenced by the lease; then, if the agent's
  inbox is empty, writes the state patch (the idle record) and releases the
  lease, as releaseIdle does. With input waiting, only the append happens
  and the run goes on. The index sets are global keys: the caller updates
  them (appendThreadReleaseIndexed does it here on a single Redis).

  Input and output: see lua/includes/appendThreadRelease.lua.
]]
--- @include "patchState"
--- @include "appendThreadEntries"
--- @include "appendThreadRelease"
return appendThreadRelease(KEYS, ARGV)
