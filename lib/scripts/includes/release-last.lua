--- @prologue
-- The first part of the release script (release-2.lua has its keys and arguments): an owner's
-- last hold is released here, with the functions of ended-holds.lua only, before the other shared
-- functions are defined, since defining them costs on every call (a prologue: the build refuses
-- it anywhere but first in an entry). The same as release_hold (release-hold.lua) for a hold
-- count of 1 and a call not answered before (not in the owner's call log), then the first
-- waiting client is popped; the rest of the script wakes it (wake-one.lua). Sets `state` (the owner's count and log) and
-- `woken` (the popped client id) for the rest of the script.
--- @include "ended-holds.lua"
local state = redis.call('HMGET', KEYS[1], ARGV[1], 'log:' .. ARGV[1])
local woken
if state[1] == '1' and not (state[2] and string.find(';' .. state[2], ';' .. string.match(ARGV[3], '^[^/]*') .. '=', 1, true)) then
  redis.call('DEL', KEYS[1])
  record_final(record_key(KEYS[1] .. ':rec:', 'r:', ARGV[1]), state[2], ARGV[3], ARGV[5], true)
  woken = redis.call('ZPOPMIN', KEYS[2])[1]
  if woken == nil then return 0 end
end
