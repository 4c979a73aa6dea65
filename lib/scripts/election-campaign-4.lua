-- A campaign's attempt: the fenced lock's acquisition (fenced-acquire-3.lua) on the election's
-- hash, which also carries the leader's epoch, value and proclaim count. An attempt that takes a
-- free election takes the next epoch from a counter that never expires (so every epoch is greater
-- than every earlier one of this name, as a fencing token), stores the value and announces the
-- new leader; a resent attempt (same request id) is answered with its epoch and changes nothing.
-- KEYS[1] election hash: owner id -> hold count, 'log:' .. owner id -> call log, 'epoch',
--         'value', 'rev' (proclaims of this epoch); TTL = the lease
-- KEYS[2] waiter set: client id -> server time of registration (ms)
-- KEYS[3] epoch counter (a plain integer key, kept forever)
-- KEYS[4] change channel (election-announce.lua)
-- ARGV[1] owner id (a fresh one per campaign)
-- ARGV[2] lease, ms
-- ARGV[3] client id
-- ARGV[4] waiter mode, as in acquire-2.lua
-- ARGV[5] request of this call (request-window.lua): a resend is applied once
-- ARGV[6] the value to publish with the leadership
-- ARGV[7] publish command: 'publish', 'spublish' or 'publish-cluster'
-- Returns { epoch } when this owner leads; otherwise the leader's PTTL in ms (-1 when the key
-- has no TTL), which bounds the caller's sleep.
--- @include "includes/waiter-set.lua"
--- @include "includes/enter-hold.lua"
--- @include "includes/election-announce.lua"
local ttl = redis.call('PTTL', KEYS[1])
local entered = enter_hold(KEYS[1], ARGV[1], ARGV[5], ARGV[2], ttl == -2)
if entered then
  local epoch
  if entered == 'taken' then
    epoch = redis.call('INCR', KEYS[3])
    redis.call('HSET', KEYS[1], 'epoch', epoch, 'value', ARGV[6], 'rev', 0)
    announce(ARGV[7], KEYS[4], 'L:' .. epoch .. ':0:' .. ARGV[6])
  else
    epoch = redis.call('HGET', KEYS[1], 'epoch')
  end
  if entered ~= 'resent' then waiter_acquired(KEYS[2], ARGV[3], ARGV[4], tonumber(ARGV[2])) end
  return { tonumber(epoch) }
end

if ARGV[4] ~= '0' then register_waiter(KEYS[2], ARGV[3], ttl > 0 and ttl or tonumber(ARGV[2]), ARGV[4]) end
return ttl
