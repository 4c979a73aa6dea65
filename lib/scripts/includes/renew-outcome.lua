-- For the batched lock renewal scripts.
-- renew_outcome(renewed, key): what the watchdog is told of one hold: 1 renewed; 2 the owner
-- no longer has it but others hold the lock; 0 the lock is gone.
local function renew_outcome(renewed, key)
  if renewed then return 1 end
  if redis.call('EXISTS', key) == 1 then return 2 end
  return 0
end
