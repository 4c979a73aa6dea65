-- Non-fair semaphore: take `count` permits if that many are free (semaphore.lua); a waiting
-- call that does not get them registers its client in the waiter set (waiter-set.lua) with its
-- need hint, so a release wakes it for the permits it frees.
-- KEYS[1] permits: sorted set '<count>:<permit id>' -> lease end (server ms), '#' -> permits out
-- KEYS[2] waiter set: client id -> server time of registration (ms)
-- KEYS[3] need hints: client id -> '<smallest local request>,<all local requests>'
-- ARGV[1] member '<count>:<permit id>' (the permit id is new per call: a resend finds it granted)
-- ARGV[2] limit: the most permits out at once, as the calling semaphore object knows it
-- ARGV[3] lease, ms
-- ARGV[4] client id
-- ARGV[5] waiter mode ('0' single attempt ... '4', see waiter-set.lua)
-- ARGV[6] the client's need hint
-- Returns nil when granted (or granted before: a resend); otherwise ms until the earliest lease
-- ends (the longest the caller sleeps before asking again).
local now = server_ms()
local permits, member, client, mode = KEYS[1], ARGV[1], ARGV[4], ARGV[5]
local count, lease = sem_count(member), tonumber(ARGV[3])
local out = sem_prune(permits, now)
if redis.call('ZSCORE', permits, member) then return nil end

if out + count <= tonumber(ARGV[2]) then
  redis.call('ZADD', permits, now + lease, member)
  sem_set_out(permits, out + count)
  sem_expire(permits, now)
  waiter_acquired(KEYS[2], client, mode, lease)
  if mode == '1' or mode == '3' then
    redis.call('HSET', KEYS[3], client, ARGV[6])
    redis.call('PEXPIRE', KEYS[3], redis.call('PTTL', KEYS[2]))
  elseif mode ~= '0' then
    redis.call('HDEL', KEYS[3], client)
  end
  return nil
end

local next_end = sem_next_end(permits, now)
if next_end < 0 then next_end = lease end
if mode ~= '0' then
  register_waiter(KEYS[2], client, next_end, mode)
  redis.call('HSET', KEYS[3], client, ARGV[6])
  redis.call('PEXPIRE', KEYS[3], redis.call('PTTL', KEYS[2]))
end
return next_end
