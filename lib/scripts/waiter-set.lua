-- Shared functions, prepended by the registry to the acquire scripts (after server-time.lua).
-- A lock's waiter set holds the ids of the clients waiting for it, scored by when each first
-- registered (server ms); a release wakes clients from it (wake-one.lua, wake-all.lua).

-- register_waiter(waiters, client_id, sleep_ms): the attempt failed and its client will sleep
-- at most sleep_ms before asking again (and registering again), so the set may expire a little
-- after that: it cannot outlive clients that all died. Never shorten it: an earlier waiter may
-- sleep longer than this one. A client keeps its first score (its place).
local function register_waiter(waiters, client_id, sleep_ms)
  if redis.call('ZSCORE', waiters, client_id) == false then
    redis.call('ZADD', waiters, server_ms(), client_id)
  end
  local keep = sleep_ms + 1000
  if redis.call('PTTL', waiters) < keep then redis.call('PEXPIRE', waiters, keep) end
end

-- waiter_acquired(waiters, client_id, mode, lease_ms): a waiting attempt succeeded.
-- mode '1': other local waiters of the client still wait, so it stays registered;
-- mode '2': it was the client's last local waiter, so the client leaves the set;
-- mode '0': a single attempt, which never registered.
local function waiter_acquired(waiters, client_id, mode, lease_ms)
  if mode == '1' then
    register_waiter(waiters, client_id, lease_ms)
  elseif mode == '2' then
    redis.call('ZREM', waiters, client_id)
  end
end
