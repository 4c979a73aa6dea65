--- @prologue
-- The first part of the acquire script (acquire-2.lua has its keys and arguments): a free lock is
-- taken here, before the shared functions are defined, since defining them costs on every call
-- (a prologue: the build refuses it anywhere but first in an entry).
-- The same as enter_hold (enter-hold.lua) on a free lock, with waiter_acquired (waiter-set.lua)
-- for the modes that need no registration (the call id inline: call_id, request-window.lua). Sets
-- `ttl` for the rest of the script.
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 and ARGV[4] ~= '1' and ARGV[4] ~= '3' then
  redis.call('HSET', KEYS[1], ARGV[1], 1, 'log:' .. ARGV[1], string.match(ARGV[5], '^[^/]*') .. '=1;')
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  -- Modes '2'/'4': the client's last local waiter acquired, so the client leaves the waiter set.
  if ARGV[4] ~= '0' then redis.call('ZREM', KEYS[2], ARGV[3]) end
  return nil
end
