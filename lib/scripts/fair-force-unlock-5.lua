-- Delete a fair lock whoever holds it, and tell the head of the queue that it is its turn; once
-- per request id.
-- KEYS[1] lock hash
-- KEYS[2] queue: waiter id -> ticket
-- KEYS[3] timeouts: waiter id -> server time (ms) at which it loses its place
-- KEYS[4] turn channel prefix (+ client id)
-- KEYS[5] record prefix (forced-once.lua)
-- ARGV[1] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- ARGV[2] request of this call ('<client id>:<seq>/<gap>', forced-once.lua)
-- Returns 1 when a lock was deleted, 0 when there was none.
--- @include "includes/fair-queue.lua"
--- @include "includes/forced-once.lua"
return force_once(KEYS[5], ARGV[2], function()
  if redis.call('DEL', KEYS[1]) == 0 then return 0 end
  notify_head(KEYS[2], KEYS[3], KEYS[4], ARGV[1])
  return 1
end)
