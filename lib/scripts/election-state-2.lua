-- Reads an election in one step: who leads now, and the last epoch ever given, so a reader can
-- order what it reads against the changes it hears (election-announce.lua).
-- KEYS[1] election hash (election-campaign-4.lua)
-- KEYS[2] epoch counter
-- Returns { last epoch given (0: never), leader's epoch or false, rev, value, PTTL of the hash }.
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local state = redis.call('HMGET', KEYS[1], 'epoch', 'rev', 'value')
if not state[1] then return { last, false, 0, '', -2 } end
return { last, tonumber(state[1]), tonumber(state[2] or '0'), state[3] or '', redis.call('PTTL', KEYS[1]) }
