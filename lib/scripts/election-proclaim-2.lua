-- The leader publishes a new value without a new election. Applied once per request id: a
-- resent call is answered from the owner's call log (call-log.lua) and announces nothing.
-- KEYS[1] election hash (election-campaign-4.lua)
-- KEYS[2] change channel (election-announce.lua)
-- ARGV[1] owner id of the leader
-- ARGV[2] request of this call (request-window.lua)
-- ARGV[3] the new value
-- ARGV[4] publish command: 'publish', 'spublish' or 'publish-cluster'
-- Returns the proclaim count of this epoch (rev, >= 1); -1 when the owner does not lead.
--- @include "includes/call-log.lua"
--- @include "includes/election-announce.lua"
local log_field = 'log:' .. ARGV[1]
local state = redis.call('HMGET', KEYS[1], ARGV[1], log_field, 'epoch')
if not state[1] then return -1 end
local logged = logged_call(state[2], ARGV[2])
if logged then return logged end
local rev = redis.call('HINCRBY', KEYS[1], 'rev', 1)
redis.call('HSET', KEYS[1], 'value', ARGV[3], log_field, log_call(state[2], ARGV[2], rev))
announce(ARGV[4], KEYS[2], 'L:' .. state[3] .. ':' .. rev .. ':' .. ARGV[3])
return rev
