-- Take or re-enter a read hold of a read-write lock (layout: read-write-holds.lua). Readers share
-- the lock; only another owner's write hold keeps a reader out (the writer may also read).
-- KEYS[1] lock hash
-- KEYS[2] readers: owner id -> end of its read lease, server ms
-- KEYS[3] readers' waiter set: client id -> server time of registration (ms)
-- ARGV[1] owner id
-- ARGV[2] lease, ms (extends the owner's read lease, never shortens it)
-- ARGV[3] client id
-- ARGV[4] waiter mode: '0' single attempt (no waiter bookkeeping); '1'-'4' waiting (with or
--         without other local readers of this client, after a wake-up or not: waiter-set.lua)
-- ARGV[5] request of this call (request-window.lua): a resend is applied once (call-log.lua)
-- Returns nil when acquired or re-entered; otherwise the ms until the writer's lease ends,
-- which bounds the caller's sleep.
--- @include "includes/read-write-holds.lua"
--- @include "includes/waiter-set.lua"
--- @include "includes/call-log.lua"
local now = server_ms()
rw_prune(KEYS[1], KEYS[2], now)

local field, log_field = 'r:' .. ARGV[1], 'log:r:' .. ARGV[1]
local state = redis.call('HMGET', KEYS[1], field, log_field)
if logged_call(state[2], ARGV[5]) then return nil end

local writer = redis.call('HMGET', KEYS[1], 'writer', 'wuntil')
if writer[1] and writer[1] ~= ARGV[1] then
  local wait = tonumber(writer[2]) - now
  if ARGV[4] ~= '0' then register_waiter(KEYS[3], ARGV[3], wait, ARGV[4]) end
  return wait
end

local holds = (tonumber(state[1]) or 0) + 1
redis.call('HSET', KEYS[1], field, holds, log_field, log_call(state[2], ARGV[5], holds))
rw_extend_read(KEYS[2], ARGV[1], now + tonumber(ARGV[2]))
rw_settle(KEYS[1], KEYS[2])
-- Unlike a writer, a reader that got in leaves the waiter set even while other local readers
-- wait: the lock admits them as well, and one that still finds it write-held registers again.
if ARGV[4] ~= '0' then redis.call('ZREM', KEYS[3], ARGV[3]) end
return nil
