-- Release one hold of a fair lock's owner (see release-hold.lua); when the lock becomes free,
-- tell the head of the queue that it is its turn.
-- KEYS[1] lock hash: owner id -> hold count, 'log:' .. owner id -> call log
-- KEYS[2] queue: waiter id -> ticket
-- KEYS[3] timeouts: waiter id -> server time (ms) at which it loses its place
-- KEYS[4] turn channel prefix (+ client id)
-- KEYS[5] record prefix: answers of calls whose hold is gone (release-hold.lua)
-- ARGV[1] owner id
-- ARGV[2] TTL the lock keeps at least when holds remain, ms ('0' leaves the TTL as it is)
-- ARGV[3] request of this call (request-window.lua)
-- ARGV[4] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- ARGV[5] how long the record of a final release answers a resend, ms
-- Returns the owner's remaining hold count (0: released); -1 when the owner held nothing.
--- @include "includes/release-hold.lua"
--- @include "includes/fair-queue.lua"
local left = release_hold(KEYS[1], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[5])
if left == 0 then notify_head(KEYS[2], KEYS[3], KEYS[4], ARGV[4]) end
return left
