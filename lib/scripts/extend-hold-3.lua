-- Extend a fixed-lease hold (lease.extend(ms)): its lease ends no earlier than `ms` from now
-- (held-lease.lua: never shortened). Applied once per request id: a resend is answered from a
-- record of the holder's latest extension, which lives as long as the extension it made.
-- KEYS[1] main key of the hold (lock hash, read-write hash, or permit set)
-- KEYS[2] readers set of a read-write lock (any key of the same slot for the other kinds)
-- KEYS[3] the holder's extension record: the request id of its latest extension
-- ARGV[1] kind: 'lock', 'read', 'write' or 'permit'
-- ARGV[2] holder (held-lease.lua)
-- ARGV[3] ms the lease lasts from now, at least
-- ARGV[4] request id of this call
-- Returns 1 when extended (or this call was applied before), 0 when the holder holds nothing.
local now = server_ms()
if redis.call('GET', KEYS[3]) == ARGV[4] then return 1 end
if not held_state(ARGV[1], KEYS[1], KEYS[2], ARGV[2], now) then return 0 end
keep_hold(ARGV[1], KEYS[1], KEYS[2], ARGV[2], tonumber(ARGV[3]), now)
redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[3])
return 1
