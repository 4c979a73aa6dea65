-- Release one acquisition of a semaphore (a Permit) and wake waiters for the permits free now:
-- non-fair waiting clients and the head of the fair queue (sem_freed). Idempotent by nature: a
-- resend, a second release, or a release after the lease ended finds no member and changes
-- nothing (but for leases that ended: their permits are free, and waiters are woken for them).
-- The set's expiry is left as it is: it already ends no earlier than the leases left.
-- KEYS: the common keys (semaphore.lua)
-- ARGV[1] member '<count>:<permit id>'
-- ARGV[2] limit, as the calling semaphore object knows it
-- ARGV[3] publish command: 'publish', 'spublish' or 'publish-cluster'
-- Returns 1 when the permits were given back now, 0 when they were not out (any more).
--- @include "includes/semaphore.lua"
--- @include "includes/semaphore-waiters.lua"
local now = server_ms()
local permits, member, limit = KEYS[1], ARGV[1], tonumber(ARGV[2])
local out, freed = sem_prune(permits, now)
local free_before = limit - out - freed
if redis.call('ZREM', permits, member) == 0 then
  if freed > 0 then sem_freed(ARGV[3], free_before, limit - out, now) end
  return 0
end
out = out - sem_count(member)
sem_set_out(permits, out)
sem_freed(ARGV[3], free_before, limit - out, now)
return 1
