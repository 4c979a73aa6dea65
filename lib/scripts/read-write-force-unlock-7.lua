-- Delete a read-write lock in one mode, whoever holds it (layout: read-write-holds.lua), and
-- wake every waiting reader, or one waiting writer when no reader waits; once per request id.
-- KEYS[1] lock hash
-- KEYS[2] readers: owner id -> end of its read lease, server ms
-- KEYS[3] readers' waiter set
-- KEYS[4] readers' wake channel prefix (+ client id)
-- KEYS[5] writers' waiter set
-- KEYS[6] writers' wake channel prefix (+ client id)
-- KEYS[7] record prefix (forced-once.lua)
-- ARGV[1] 'write': delete the lock if a writer holds it (with the writer's own read holds);
--         'read': delete it if readers hold it and no writer does
-- ARGV[2] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- ARGV[3] request of this call ('<client id>:<seq>/<gap>', forced-once.lua)
-- Returns 1 when the lock was deleted, 0 when it was not held in that mode.
--- @include "includes/read-write-holds.lua"
--- @include "includes/wake-one.lua"
--- @include "includes/wake-all.lua"
--- @include "includes/forced-once.lua"
return force_once(KEYS[7], ARGV[3], function()
  rw_prune(KEYS[1], KEYS[2], server_ms())
  local writer = redis.call('HEXISTS', KEYS[1], 'writer') == 1
  if ARGV[1] == 'write' and not writer then return 0 end
  if ARGV[1] == 'read' and (writer or redis.call('ZCARD', KEYS[2]) == 0) then return 0 end

  redis.call('DEL', KEYS[1], KEYS[2])
  if wake_all(KEYS[3], KEYS[4], ARGV[2]) == 0 then wake_one(KEYS[5], KEYS[6], ARGV[2]) end
  return 1
end)
