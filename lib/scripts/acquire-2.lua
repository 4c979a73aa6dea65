-- Acquire or re-enter the lock for an owner (enter-hold.lua); keep the caller's client in the
-- waiter set while it has local waiters, so a release can wake exactly one client.
-- KEYS[1] lock hash: owner id -> hold count, 'log:' .. owner id -> call log; its TTL is the lease
-- KEYS[2] waiter set: client id -> server time of registration (ms)
-- ARGV[1] owner id
-- ARGV[2] lease, ms (a re-entry extends the TTL to it, never shortens it)
-- ARGV[3] client id ('' in mode '0', which does no waiter bookkeeping)
-- ARGV[4] waiter mode: '0' single attempt (no waiter bookkeeping);
--         '1' waiting, and other local waiters of this client wait too;
--         '2' waiting, and this is the client's only local waiter;
--         '3'/'4' as '1'/'2', for the attempt a wake-up prompted (waiter-set.lua)
-- ARGV[5] request of this call (request-window.lua): a resend is applied once
-- Returns nil when acquired or re-entered; otherwise the holder's PTTL in ms
-- (-1 when the key has no TTL), which bounds the caller's sleep.
-- The prologue comes first, before the shared functions are defined (docs/performance.md): it
-- takes a free lock at once, else sets `ttl` (the lock's PTTL) for the rest.
--- @include "includes/acquire-free.lua"
--- @include "includes/waiter-set.lua"
--- @include "includes/enter-hold.lua"
local entered = enter_hold(KEYS[1], ARGV[1], ARGV[5], ARGV[2], ttl == -2)
if entered then
  if entered ~= 'resent' then waiter_acquired(KEYS[2], ARGV[3], ARGV[4], tonumber(ARGV[2])) end
  return nil
end

if ARGV[4] ~= '0' then register_waiter(KEYS[2], ARGV[3], ttl > 0 and ttl or tonumber(ARGV[2]), ARGV[4]) end
return ttl
