--- @include "server-time.lua"

-- For the acquire scripts. A lock's waiter set holds the ids of the clients waiting for it, scored by when each first
-- registered (server ms); a release wakes clients from it (wake-one.lua, wake-all.lua).
-- Waiter modes (ARGV of the acquire scripts): '0' single attempt, no bookkeeping; '1' waiting,
-- other local waiters of the client wait too; '2' waiting, the client's only local waiter;
-- '3' and '4' as '1' and '2', for the attempt a wake-up notice prompted.

-- register_waiter(waiters, client_id, sleep_ms, mode): the attempt failed and its client will
-- sleep at most sleep_ms before asking again (and registering again), so the set may expire a
-- little after that: it cannot outlive clients that all died. Never shorten it: an earlier
-- waiter may sleep longer than this one. A client keeps its first score (its place). A client
-- woken by a release was taken off the set; if a newcomer got in first, it goes back to the
-- front, not the end: it was next, and losing one race must not cost it a whole round.
local function register_waiter(waiters, client_id, sleep_ms, mode)
  if redis.call('ZSCORE', waiters, client_id) == false then
    local score = server_ms()
    if mode == '3' or mode == '4' then
      local head = redis.call('ZRANGE', waiters, 0, 0, 'WITHSCORES')[2]
      if head and tonumber(head) <= score then score = tonumber(head) - 1 end
    end
    redis.call('ZADD', waiters, score, client_id)
  end
  local keep = sleep_ms + 1000
  if redis.call('PTTL', waiters) < keep then redis.call('PEXPIRE', waiters, keep) end
end

-- waiter_acquired(waiters, client_id, mode, lease_ms): a waiting attempt succeeded.
-- mode '1'/'3': other local waiters of the client still wait, so it stays registered;
-- mode '2'/'4': it was the client's last local waiter, so the client leaves the set;
-- mode '0': a single attempt, which never registered.
local function waiter_acquired(waiters, client_id, mode, lease_ms)
  if mode == '1' or mode == '3' then
    register_waiter(waiters, client_id, lease_ms, '1')
  elseif mode == '2' or mode == '4' then
    redis.call('ZREM', waiters, client_id)
  end
end
