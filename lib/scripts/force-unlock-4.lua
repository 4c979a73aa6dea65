-- Delete the lock whoever holds it, and wake one waiting client; once per request.
-- KEYS[1] lock hash
-- KEYS[2] waiter set
-- KEYS[3] wake channel prefix (+ client id)
-- KEYS[4] record prefix (forced-once.lua)
-- ARGV[1] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- ARGV[2] request of this call ('<client id>:<seq>/<gap>', forced-once.lua)
-- Returns 1 when a lock was deleted, 0 when there was none.
--- @include "includes/wake-one.lua"
--- @include "includes/forced-once.lua"
return force_once(KEYS[4], ARGV[2], function()
  if redis.call('DEL', KEYS[1]) == 0 then return 0 end
  wake_one(KEYS[2], KEYS[3], ARGV[1])
  return 1
end)
