-- Acquire or re-enter a fair lock for an owner, in queue order. A waiting call that does not get
-- it joins the queue, or checks in (keeps its place) if it is queued already.
-- KEYS[1] lock hash: owner id -> hold count, 'fair' -> 1 (names the kind for inspections, also
--         with an empty queue); its TTL is the lease
-- KEYS[2] queue: waiter id -> ticket (arrival order: the server ms it joined, made unique and
--         increasing, so an inspection can tell how long each has waited)
-- KEYS[3] timeouts: waiter id -> server time (ms) at which it loses its place
-- ARGV[1] owner id
-- ARGV[2] lease, ms (a re-entry extends the TTL to it, never shortens it)
-- ARGV[3] waiter id ('<client id>|<n>', one per waiting call); '' for a single attempt, which
--         gets the lock only if it is free and nobody is queued (or re-enters), never queues
-- ARGV[4] wait timeout, ms: how long a waiter keeps its place without checking in
-- ARGV[5] request of this call (request-window.lua): a resend is applied once (enter-hold.lua)
-- Returns nil when acquired or re-entered. Otherwise the latest time to ask again, ms: for the
-- head, the holder's PTTL; behind it, the time until the waiter ahead loses its place (a live
-- one checks in long before). 0 after a failed single attempt.
--- @include "includes/fair-queue.lua"
--- @include "includes/enter-hold.lua"
local now = server_ms()
drop_expired(KEYS[2], KEYS[3], now)
local waiter = ARGV[3]

local function leave_queue()
  if waiter ~= '' then
    redis.call('ZREM', KEYS[2], waiter)
    redis.call('ZREM', KEYS[3], waiter)
  end
end

local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then
  local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if head == nil or head == waiter then
    enter_hold(KEYS[1], ARGV[1], ARGV[5], ARGV[2], true)
    redis.call('HSET', KEYS[1], 'fair', 1)
    leave_queue()
    return nil
  end
elseif enter_hold(KEYS[1], ARGV[1], ARGV[5], ARGV[2], false) then
  leave_queue()
  return nil
end
if waiter == '' then return 0 end

if redis.call('ZSCORE', KEYS[2], waiter) == false then
  local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]
  redis.call('ZADD', KEYS[2], math.max((tonumber(last) or 0) + 1, now), waiter)
end
local timeout = tonumber(ARGV[4])
redis.call('ZADD', KEYS[3], now + timeout, waiter)
-- Every waiter's place ends within its timeout of its last check-in, so the queue may expire
-- then: it cannot outlive clients that all died. Never shorten it: other clients may be
-- configured with a longer timeout.
for i = 2, 3 do
  if redis.call('PTTL', KEYS[i]) < timeout then redis.call('PEXPIRE', KEYS[i], timeout) end
end

local rank = redis.call('ZRANK', KEYS[2], waiter)
if rank == 0 then return ttl >= 0 and ttl or timeout end
local ahead = redis.call('ZRANGE', KEYS[2], rank - 1, rank - 1)[1]
return math.max(0, tonumber(redis.call('ZSCORE', KEYS[3], ahead)) - now)
