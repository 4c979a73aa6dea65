-- Acquire or re-enter the lock for an owner; keep the caller's client in the waiter set
-- while it has local waiters, so a release can wake exactly one client.
-- KEYS[1] lock hash: owner id -> hold count; its TTL is the lease
-- KEYS[2] waiter set: client id -> server time of registration (ms)
-- ARGV[1] owner id
-- ARGV[2] lease, ms
-- ARGV[3] client id
-- ARGV[4] waiter mode: '0' single attempt (no waiter bookkeeping);
--         '1' waiting, and other local waiters of this client wait too;
--         '2' waiting, and this is the client's only local waiter
-- Returns nil when acquired or re-entered; otherwise the holder's PTTL in ms
-- (-1 when the key has no TTL), which bounds the caller's sleep.
local ttl = redis.call('PTTL', KEYS[1])

local function register()
  if redis.call('ZSCORE', KEYS[2], ARGV[3]) == false then
    local now = redis.call('TIME')
    redis.call('ZADD', KEYS[2], now[1] * 1000 + math.floor(now[2] / 1000), ARGV[3])
  end
  -- Waiters sleep at most the holder's TTL before asking again (and registering again), so
  -- the set may expire a little after that: it cannot outlive clients that all died. Never
  -- shorten it: an earlier waiter may sleep longer than this one.
  local keep = (ttl > 0 and ttl or tonumber(ARGV[2])) + 1000
  if redis.call('PTTL', KEYS[2]) < keep then redis.call('PEXPIRE', KEYS[2], keep) end
end

if ttl == -2 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if ARGV[4] == '1' then
    register()
  elseif ARGV[4] == '2' then
    redis.call('ZREM', KEYS[2], ARGV[3])
  end
  return nil
end

if ARGV[4] ~= '0' then register() end
return ttl
