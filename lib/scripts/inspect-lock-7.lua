-- Read-only look at every key of one lock, for the inspection API and the `rlock` CLI. Writes
-- nothing, so it may run anywhere a read may (Redis 6.2+; all keys share the lock's hash slot).
-- Holds and waiters whose time ran out are left out, as the changing scripts would drop them.
-- KEYS[1] lock hash: exclusive kinds owner id -> hold count ('log:' .. owner: call log, 'waited',
--         fenced 'token', fair 'fair'); read-write 'writer', 'writes', 'wuntil', 'r:' .. owner (read-write-holds.lua)
-- KEYS[2] waiter set (exclusive lock, or a read-write lock's writers): client id -> server ms of
--         registration
-- KEYS[3] readers' waiter set of a read-write lock (same layout)
-- KEYS[4] fair queue: waiter id -> ticket (server ms it joined, or an arrival number)
-- KEYS[5] fair timeouts: waiter id -> server ms at which it loses its place
-- KEYS[6] readers of a read-write lock: owner id -> end of its read lease, server ms
-- KEYS[7] fencing token counter
-- ARGV[1] at most this many entries are returned from each set (the counts are exact)
-- Returns { server ms, PTTL of the hash, hash fields and values (call logs left out),
--           readers { owner, lease end, ... }, waiters { id, since, ... },
--           read waiters { id, since, ... }, queue { waiter id, ticket, ... } (live ones, head
--           first), token counter (false: none), readers count, waiters count,
--           read waiters count, queue count (live ones) }.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit = tonumber(ARGV[1])

local fields = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 4) ~= 'log:' then
    fields[#fields + 1] = all[i]
    fields[#fields + 1] = all[i + 1]
  end
end

local readers = redis.call('ZRANGEBYSCORE', KEYS[6], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
local reader_count = redis.call('ZCOUNT', KEYS[6], '(' .. now, '+inf')
local waiters = redis.call('ZRANGE', KEYS[2], 0, limit - 1, 'WITHSCORES')
local read_waiters = redis.call('ZRANGE', KEYS[3], 0, limit - 1, 'WITHSCORES')

-- Live waiters in queue order: a waiter whose place ran out is dead (its client stopped checking in).
local queue = {}
local live = 0
local dead_count = redis.call('ZCOUNT', KEYS[5], '-inf', now)
local scan = redis.call('ZRANGE', KEYS[4], 0, limit + math.min(dead_count, 1000) - 1, 'WITHSCORES')
for i = 1, #scan, 2 do
  local place_ends = tonumber(redis.call('ZSCORE', KEYS[5], scan[i]))
  if place_ends ~= nil and place_ends > now and live < limit then
    live = live + 1
    queue[#queue + 1] = scan[i]
    queue[#queue + 1] = scan[i + 1]
  end
end
local queue_count = math.max(0, redis.call('ZCARD', KEYS[4]) - dead_count)

return {
  now,
  redis.call('PTTL', KEYS[1]),
  fields,
  readers,
  waiters,
  read_waiters,
  queue,
  redis.call('GET', KEYS[7]),
  reader_count,
  redis.call('ZCARD', KEYS[2]),
  redis.call('ZCARD', KEYS[3]),
  queue_count,
}
