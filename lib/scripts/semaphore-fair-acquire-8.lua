-- Fair semaphore: take `count` permits in strict arrival order. Only the head of the queue
-- (fair-queue.lua; waiter ids '<client id>|<n>|<count>') may take permits, so a large request
-- at the head is never overtaken; a single attempt gets permits only when nobody is queued.
-- KEYS: the common keys (semaphore.lua); the fair ones are
-- KEYS[6] queue: waiter id -> ticket (arrival order)
-- KEYS[7] timeouts: waiter id -> server time (ms) at which it loses its place
-- KEYS[8] turn channel prefix (+ client id)
-- ARGV[1] member '<count>:<permit id>' (new per call: a resend finds it granted)
-- ARGV[2] limit
-- ARGV[3] lease, ms
-- ARGV[4] waiter id; '' for a single attempt, which never queues
-- ARGV[5] wait timeout, ms: how long a waiter keeps its place without checking in
-- ARGV[6] publish command
-- ARGV[7] '1': the waiter's first attempt (it is not queued unless this is a resend of it)
-- Returns nil when granted. Otherwise the latest time to ask again, ms: for the head, until the
-- earliest lease ends; behind it, until the waiter ahead loses its place. 0 after a failed
-- single attempt.
--- @include "includes/fair-queue.lua"
--- @include "includes/semaphore.lua"
--- @include "includes/semaphore-waiters.lua"
local now = server_ms()
local permits, queue, timeouts = KEYS[1], KEYS[6], KEYS[7]
local member, limit, lease, waiter = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local out, freed, first = sem_prune(permits, now)

local function leave_queue()
  if waiter ~= '' then
    redis.call('ZREM', queue, waiter)
    redis.call('ZREM', timeouts, waiter)
  end
end

local count = sem_count(member)
-- The head that has not lost its place (one read when this waiter is the head or none waits;
-- none when the queue was seen empty: semaphore.lua's '#q'), and the one after it: the next head
-- when this waiter, the head, is granted (false: none).
local head, second = nil, nil
if not sem_set.no_queue then
  local first = redis.call('ZRANGE', queue, 0, 1)
  head, second = first[1], first[2] or false
  if head ~= nil and head ~= waiter then head = sem_head(queue, timeouts, now, head) end
end
if (head == nil or head == waiter) and out + count <= limit then
  out = sem_grant(permits, member, count, out, lease, now)
  leave_queue()
  -- nil: a resend of a call granted before (its member is in the set), which changes nothing more.
  if out == nil then return nil end
  -- The next in line may fit in what is left: it was not the head before, so it is told now.
  if head ~= nil then sem_turn(queue, timeouts, KEYS[8], ARGV[6], -1, limit - out, now, second) end
  -- Leases that ended freed permits: non-fair waiters (of objects on the same name) too.
  if freed > 0 then sem_wake(KEYS[2], KEYS[3], KEYS[5], KEYS[4], ARGV[6], limit - out, now) end
  return nil
end
if redis.call('ZSCORE', permits, member) then
  leave_queue()
  return nil
end
-- Leases that ended freed permits: the head (another waiter) is told if it fits now, non-fair
-- waiters are woken for them.
if freed > 0 then
  if head ~= waiter then sem_turn(queue, timeouts, KEYS[8], ARGV[6], limit - out - freed, limit - out, now) end
  sem_wake(KEYS[2], KEYS[3], KEYS[5], KEYS[4], ARGV[6], limit - out, now)
end
if waiter == '' then return 0 end

if sem_set.no_queue then
  redis.call('ZREM', permits, '#q')
  sem_set.no_queue = false
end
local timeout = tonumber(ARGV[5])
-- A first attempt is not queued yet (no read), unless it is a resend: its ZADD NX finds it.
local ticket = false
if ARGV[7] ~= '1' then ticket = redis.call('ZSCORE', queue, waiter) end
local made = false
if ticket == false then
  local last = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')[2]
  ticket = (tonumber(last) or 0) + 1
  if redis.call('ZADD', queue, 'NX', ticket, waiter) == 0 then
    ticket = redis.call('ZSCORE', queue, waiter)
  else
    made = last == nil
  end
end
redis.call('ZADD', timeouts, now + timeout, waiter)
-- The two sets hold the same waiters, so they are made and emptied together, and their expiry
-- is set together: one PTTL tells both. The permit set remembers it ('#eq', semaphore.lua): no
-- PTTL while that is far enough. Made now (empty before): no expiry yet, nothing to read.
local ttl = nil
if made then
  ttl = -1
elseif sem_set.queue_lives < now + timeout then
  ttl = redis.call('PTTL', timeouts)
end
if ttl ~= nil then
  if ttl < timeout then
    ttl = timeout + SEM_SLACK_MS
    redis.call('PEXPIRE', queue, ttl)
    redis.call('PEXPIRE', timeouts, ttl)
  end
  if sem_set.exists then
    sem_set.queue_lives = now + ttl
    redis.call('ZADD', permits, -sem_set.queue_lives, '#eq')
  end
end

-- Behind the head: until the waiter just ahead loses its place, that waiter being one that still
-- has it (those that lost theirs are dropped first, when the one just ahead is one of them).
local function just_ahead()
  local ahead = redis.call('ZRANGE', queue, '(' .. ticket, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, 1)[1]
  if ahead == nil then return nil end
  return tonumber(redis.call('ZSCORE', timeouts, ahead) or '0')
end
local ahead_ends = nil
if head ~= nil and head ~= waiter then
  ahead_ends = just_ahead()
  if ahead_ends ~= nil and ahead_ends <= now then
    drop_expired(queue, timeouts, now)
    ahead_ends = just_ahead()
  end
end
if ahead_ends == nil then
  local next_end = sem_next_end(permits, now, first)
  return next_end > 0 and next_end or timeout
end
return math.max(0, ahead_ends - now)
