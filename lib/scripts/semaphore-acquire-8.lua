-- Non-fair semaphore: take `count` permits if that many are free (semaphore.lua); a waiting
-- call that does not get them registers its client in the waiter set (sem_register) with its
-- need hint, so a wake-up (sem_wake) names it once enough permits are free for its requests.
-- KEYS: the common keys (semaphore.lua)
-- ARGV[1] member '<count>:<permit id>' (the permit id is new per call: a resend finds it granted)
-- ARGV[2] limit: the most permits out at once, as the calling semaphore object knows it
-- ARGV[3] lease, ms
-- ARGV[4] client id
-- ARGV[5] waiter mode ('0' single attempt ... '4', see waiter-set.lua)
-- ARGV[6] the client's need hint, this request included (kept if this call waits)
-- ARGV[7] the need hint of the client's other waiting requests, '' if none (kept if granted)
-- ARGV[8] permits promised to the client (sem_wake) that this attempt uses: its request, if a
--         notice woke it for them; else 0
-- ARGV[9] publish command
-- Returns nil when granted (or granted before: a resend); otherwise ms until the earliest lease
-- ends (the longest the caller sleeps before asking again).
-- Waiters are woken here too when permits may be free for them: leases that ended (pruned by
-- this call: whoever calls next), or a waiting call that still sees permits free (it registers
-- a hint that may fit them, or a promise it used came back unused).
--- @include "includes/semaphore.lua"
--- @include "includes/semaphore-waiters.lua"
local now = server_ms()
local permits, member, client, mode = KEYS[1], ARGV[1], ARGV[4], ARGV[5]
local count, limit, lease = sem_count(member), tonumber(ARGV[2]), tonumber(ARGV[3])
local out, freed, first = sem_prune(permits, now)
local free_before = limit - out - freed

if out + count <= limit then
  -- nil: a resend of a call granted before (its member is in the set), which changes nothing.
  out = sem_grant(permits, member, count, out, lease, now)
  if out == nil then return nil end
  sem_unpromise(KEYS[2], KEYS[5], client, tonumber(ARGV[8]))
  if mode ~= '0' then
    if ARGV[7] ~= '' then
      -- Other local requests still wait: the client stays registered, with their hint.
      sem_register(KEYS[2], KEYS[3], client, ARGV[7], lease, '1', now)
    elseif not sem_set.no_waiters and redis.call('ZREM', KEYS[2], client) == 1 then
      -- A hint is kept only while its client is registered (a wake-up took both away).
      redis.call('HDEL', KEYS[3], client)
    end
  end
  if freed > 0 or ARGV[7] ~= '' then sem_freed(ARGV[9], free_before, limit - out, now) end
  return nil
end

if redis.call('ZSCORE', permits, member) then return nil end
sem_unpromise(KEYS[2], KEYS[5], client, tonumber(ARGV[8]))
local next_end = sem_next_end(permits, now, first)
if next_end < 0 then next_end = lease end
if mode ~= '0' then sem_register(KEYS[2], KEYS[3], client, ARGV[6], next_end, mode, now) end
if freed > 0 or (mode ~= '0' and out < limit) then sem_freed(ARGV[9], free_before, limit - out, now) end
return next_end
