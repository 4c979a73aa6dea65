-- A woken client hands back permits it was promised (sem_wake) and cannot use: its waiters that
-- could gave up or got permits meanwhile, or its notice named more than they need. Optionally
-- it leaves the waiter set (no local waiter left, or its client closed). Then every free,
-- unpromised permit goes to the next clients (sem_freed), not only those handed back.
-- KEYS: the common keys (semaphore.lua)
-- ARGV[1] client id
-- ARGV[2] limit
-- ARGV[3] publish command
-- ARGV[4] permits handed back (0: none, the client only leaves), or 'all' (everything promised)
-- ARGV[5] '1': the client leaves the waiter set
-- Returns nothing.
--- @include "includes/semaphore.lua"
--- @include "includes/semaphore-waiters.lua"
local now = server_ms()
local client = ARGV[1]
if ARGV[5] == '1' then
  redis.call('ZREM', KEYS[2], client)
  redis.call('HDEL', KEYS[3], client)
end
sem_unpromise(KEYS[2], KEYS[5], client, ARGV[4] == 'all' and math.huge or tonumber(ARGV[4]))
local out, freed = sem_prune(KEYS[1], now)
if ARGV[5] == '1' then sem_leave_keeper(KEYS[2]) end
local free = tonumber(ARGV[2]) - out
sem_freed(ARGV[3], free - freed, free, now)
