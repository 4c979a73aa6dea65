-- Take or re-enter the write hold of a read-write lock (layout: read-write-holds.lua). A writer
-- needs the lock free of other owners' holds; the writer may re-enter and may also take read
-- holds. An owner holding only read holds is refused at once: it would wait for itself.
-- KEYS[1] lock hash
-- KEYS[2] readers: owner id -> end of its read lease, server ms
-- KEYS[3] writers' waiter set: client id -> server time of registration (ms)
-- ARGV[1] owner id
-- ARGV[2] lease, ms (extends the write lease, never shortens it)
-- ARGV[3] client id
-- ARGV[4] waiter mode: '0' single attempt; '1' waiting, other local writers of this client wait
--         too; '2' waiting, the client's only local writer; '3'/'4' the same after a wake-up
--         (waiter-set.lua)
-- ARGV[5] request of this call (request-window.lua): a resend is applied once (call-log.lua)
-- Returns nil when acquired or re-entered; -3 when the owner holds read holds only (upgrade
-- refused); otherwise the PTTL of the lock, i.e. the ms until its last current hold ends (-1:
-- no TTL), which bounds the caller's sleep.
--- @include "includes/read-write-holds.lua"
--- @include "includes/waiter-set.lua"
--- @include "includes/call-log.lua"
local now = server_ms()
rw_prune(KEYS[1], KEYS[2], now)

local ends = now + tonumber(ARGV[2])
local log_field = 'log:w:' .. ARGV[1]
local writer = redis.call('HMGET', KEYS[1], 'writer', 'writes', log_field)
if writer[1] == ARGV[1] then
  if logged_call(writer[3], ARGV[5]) then return nil end
  local holds = tonumber(writer[2]) + 1
  redis.call('HSET', KEYS[1], 'writes', holds, log_field, log_call(writer[3], ARGV[5], holds))
  rw_extend_write(KEYS[1], ends)
elseif not writer[1] and redis.call('ZCARD', KEYS[2]) == 0 then
  redis.call('HSET', KEYS[1], 'writer', ARGV[1], 'writes', 1, 'wuntil', ends, log_field, call_id(ARGV[5]) .. '=1;')
else
  if not writer[1] and redis.call('HEXISTS', KEYS[1], 'r:' .. ARGV[1]) == 1 then return -3 end
  local wait = redis.call('PTTL', KEYS[1])
  if ARGV[4] ~= '0' then register_waiter(KEYS[3], ARGV[3], wait > 0 and wait or tonumber(ARGV[2]), ARGV[4]) end
  return wait
end

rw_settle(KEYS[1], KEYS[2])
waiter_acquired(KEYS[3], ARGV[3], ARGV[4], tonumber(ARGV[2]))
return nil
