-- Release one acquisition of a semaphore (a Permit) and wake waiters for the permits it frees:
-- non-fair waiting clients (sem_wake) and the head of the fair queue (sem_turn). Idempotent by
-- nature: a resend, a second release, or a release after the lease ended finds no member and
-- changes nothing.
-- KEYS[1] permits (semaphore.lua)
-- KEYS[2] waiter set (non-fair)      KEYS[3] need hints       KEYS[4] wake channel prefix
-- KEYS[5] fair queue                 KEYS[6] fair timeouts    KEYS[7] turn channel prefix
-- ARGV[1] member '<count>:<permit id>'
-- ARGV[2] limit, as the calling semaphore object knows it
-- ARGV[3] publish command: 'publish', 'spublish' or 'publish-cluster'
-- Returns 1 when the permits were given back now, 0 when they were not out (any more).
local now = server_ms()
local permits, member, limit = KEYS[1], ARGV[1], tonumber(ARGV[2])
local out, freed = sem_prune(permits, now)
local free_before = limit - out
if redis.call('ZREM', permits, member) == 0 then return 0 end
local count = sem_count(member)
out = out - count
sem_set_out(permits, out)
sem_expire(permits, now)
sem_wake(KEYS[2], KEYS[3], KEYS[4], ARGV[3], math.min(limit - out, count + freed))
sem_turn(KEYS[5], KEYS[6], KEYS[7], ARGV[3], free_before - freed, limit - out)
return 1
