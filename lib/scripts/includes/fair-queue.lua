-- server_ms() sets and compares every deadline; the head is told by notice().
--- @include "server-time.lua"
--- @include "notice.lua"

-- The fair lock's queue (and the fair semaphore's).
-- The queue of a fair lock is two sorted sets over the same members, one per waiting call (its
-- waiter id, '<client id>|<n>'): the queue scores each by a ticket (arrival order), the
-- timeouts set by the server time (ms) at which it loses its place unless it checks in again.
-- Every operation on them is O(log N) in the queue length.

-- Drops waiters whose time ran out (their client stopped checking in: it died). At most 100 per
-- call keeps every call short; each dead waiter is dropped once, by whichever call comes first.
local function drop_expired(queue, timeouts, now)
  local dead = redis.call('ZRANGEBYSCORE', timeouts, '-inf', now, 'LIMIT', 0, 100)
  if #dead > 0 then
    redis.call('ZREM', queue, unpack(dead))
    redis.call('ZREM', timeouts, unpack(dead))
  end
end

-- The lock is free: tell the head of the queue (and only the head) that it is its turn, on its
-- client's own channel, naming the waiter. A client that is gone receives nothing; its waiter
-- keeps its place until its time runs out, and the waiter behind it re-checks right then.
-- Returns 1 when a head was told, 0 when the queue is empty.
local function notify_head(queue, timeouts, turn_prefix, publish)
  drop_expired(queue, timeouts, server_ms())
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
  if head == nil then return 0 end
  notice(publish, turn_prefix .. string.match(head, '^[^|]*'), head)
  return 1
end
