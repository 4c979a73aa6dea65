-- Release one hold of an owner (see release-hold.lua); when the lock becomes free, wake one
-- waiting client.
-- KEYS[1] lock hash: owner id -> hold count, 'log:' .. owner id -> call log. The lock's other
--         names start with it (keys.ts), so they are not sent: KEYS[1] .. ':wake:' is the wake
--         channel prefix (+ client id), KEYS[1] .. ':rec:' the record prefix ('r:' .. client id,
--         ended-holds.lua)
-- KEYS[2] waiter set
-- ARGV[1] owner id
-- ARGV[2] TTL the lock keeps at least when holds remain, ms ('0' leaves the TTL as it is)
-- ARGV[3] request of this call (request-window.lua)
-- ARGV[4] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- ARGV[5] how long the record of a final release answers a resend, ms
-- Returns the owner's remaining hold count (0: released); -1 when the owner held nothing.
-- The prologue comes first, before the other shared functions are defined (docs/performance.md):
-- it releases a last hold at once and pops the first waiter (`woken`), else sets `state`.
--- @include "includes/release-last.lua"
--- @include "includes/release-hold.lua"
--- @include "includes/wake-one.lua"
local wake_prefix = KEYS[1] .. ':wake:'
if woken then
  if notice(ARGV[4], wake_prefix .. woken) == 0 then wake_one(KEYS[2], wake_prefix, ARGV[4]) end
  return 0
end
local left = release_hold(KEYS[1], KEYS[1] .. ':rec:', ARGV[1], ARGV[2], ARGV[3], ARGV[5], state)
if left == 0 then wake_one(KEYS[2], wake_prefix, ARGV[4]) end
return left
