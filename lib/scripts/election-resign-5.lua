-- A leader steps down (or a campaign nobody waits for any more is undone): releases the owner's
-- hold (release-hold.lua); when that frees the election, announces the vacancy and wakes one
-- waiting client, so the next campaigner leads at once.
-- KEYS[1] election hash (election-campaign-4.lua)
-- KEYS[2] waiter set
-- KEYS[3] wake channel prefix (+ client id)
-- KEYS[4] record prefix: answers of calls whose hold is gone ('r:' .. owner id)
-- KEYS[5] change channel (election-announce.lua)
-- ARGV[1] owner id
-- ARGV[2] TTL the election keeps at least when holds remain, ms ('0' leaves it as it is)
-- ARGV[3] request of this call (request-window.lua)
-- ARGV[4] publish command: 'publish', 'spublish' or 'publish-cluster'
-- ARGV[5] how long the record of a final release answers a resend, ms
-- Returns the owner's remaining hold count (0: stepped down); -1 when the owner held nothing.
--- @include "includes/release-hold.lua"
--- @include "includes/wake-one.lua"
--- @include "includes/election-announce.lua"
local state = redis.call('HMGET', KEYS[1], ARGV[1], 'epoch')
local left = release_hold(KEYS[1], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ARGV[5], nil)
-- Only the call that freed it announces: a resend is answered from the record and says nothing.
if left == 0 and state[1] and redis.call('EXISTS', KEYS[1]) == 0 then
  announce(ARGV[4], KEYS[5], 'V:' .. state[2])
  wake_one(KEYS[2], KEYS[3], ARGV[4])
end
return left
