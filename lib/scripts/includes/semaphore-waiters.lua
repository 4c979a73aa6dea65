--- @include "fair-queue.lua"
--- @include "semaphore.lua"

-- For the semaphore scripts that wake waiters (semaphore.lua has the permit set they read): the non-fair waiter set with its need hints and promises, the
-- fair queue's turn notices, and sem_freed, which runs both when permits become free.

-- How long permits offered to a woken client stay promised to it (sem_wake) if it neither
-- takes them nor hands them back: a client that died right after its notice.
local SEM_PROMISE_MS = 1000

-- A waiter's score in the waiter set is when it registered (server ms), plus SEM_HINTED when the
-- need hints hash may hold a hint for it. A client without one waits for single permits ('1,1',
-- the usual case): nothing is written for it, and a wake-up reads no hint.
local SEM_HINTED = 0.5
local SEM_NO_HINT = '1,1'

local function sem_hinted(score)
  return tonumber(score) % 1 ~= 0
end

-- The waiter set's expiry is remembered in the permit set ('#w', semaphore.lua), so registering
-- and promising need no PTTL. Its keeper, a member scored below every other, stays while that is
-- remembered: a set whose last waiter left is not deleted, then made again without an expiry. A
-- wake-up that finds only the keeper deletes the set and marks it empty instead.
local SEM_KEEPER = '#'
local SEM_KEEPER_SCORE = -4503599627370496

-- sem_keep_waiters(waiters, ms, now): as sem_keep for the waiter set; no command while the
-- remembered expiry is far enough (others only lengthen it, and the keeper keeps the set).
local function sem_keep_waiters(waiters, ms, now)
  if sem_set.waiters_lives >= now + ms then return end
  redis.call('ZADD', waiters, SEM_KEEPER_SCORE, SEM_KEEPER)
  local ttl = redis.call('PTTL', waiters)
  if ttl < ms then
    redis.call('PEXPIRE', waiters, ms + SEM_SLACK_MS)
    ttl = ms + SEM_SLACK_MS
  end
  if sem_set.exists then
    sem_set.waiters_lives, sem_set.no_waiters = now + ttl, false
    redis.call('ZADD', KEYS[1], -sem_set.waiters_lives, '#w')
  end
end

-- sem_leave_keeper(waiters): a client left the waiter set for good; if only the keeper is left,
-- the set goes and is marked empty (a set nobody waits in is not left behind).
local function sem_leave_keeper(waiters)
  if redis.call('ZCARD', waiters) ~= 1 or not redis.call('ZSCORE', waiters, SEM_KEEPER) then return end
  redis.call('DEL', waiters)
  sem_set.waiters_lives = 0
  sem_mark(KEYS[1], '#w')
  sem_set.no_waiters = sem_set.exists
end

-- sem_register(waiters, needs, client, hint, sleep_ms, mode, now): a waiting client (re)registers
-- with its need hint (the waiter modes and placement are waiter-set.lua's: a client keeps its
-- first place; one a notice woke goes back to the front). Both keys may expire a second after
-- the client's sleep ends: they cannot outlive clients that all died.
local function sem_register(waiters, needs, client, hint, sleep_ms, mode, now)
  -- Seen empty ('#w' is -1): no expiry is remembered, so sem_keep_waiters (below) rewrites '#w'.
  local flag = hint == SEM_NO_HINT and 0 or SEM_HINTED
  local score = false
  if mode == '3' or mode == '4' then score = redis.call('ZSCORE', waiters, client) end
  if score == false then
    local place = now
    if mode == '3' or mode == '4' then
      local head = redis.call('ZRANGE', waiters, 0, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')[2]
      if head and tonumber(head) <= place then place = math.floor(tonumber(head)) - 1 end
    end
    -- Registered already (a client keeps its place): the score says whether a hint may be kept.
    if redis.call('ZADD', waiters, 'NX', place + flag, client) == 0 then score = redis.call('ZSCORE', waiters, client) end
  end
  if score ~= false then
    if flag > 0 and not sem_hinted(score) then
      redis.call('ZADD', waiters, 'XX', math.floor(tonumber(score)) + flag, client)
    elseif flag == 0 and sem_hinted(score) then
      redis.call('HDEL', needs, client)
    end
  end
  sem_keep_waiters(waiters, sleep_ms + 1000, now)
  if flag > 0 then
    redis.call('HSET', needs, client, hint)
    sem_keep(needs, sleep_ms + 1000)
  end
end

-- Promises: the permits a notice offered a client that it has neither taken (its woken attempt)
-- nor handed back (semaphore-pass-wake-8.lua). They are free in the permit set but spoken for: a
-- later wake-up does not offer them again, so two releases in a row never wake more than they
-- free. They live in the waiter set, below its waiters (scored minus the server ms the promise
-- ends): '@<client id>' promises one permit; '%<client id>' more, how many in the promises hash
-- (KEYS[5]: client id -> count). A client has at most one of the two.

-- sem_promise(waiters, promises, client, count, held, now): `count` more permits are promised to
-- the client, which had `held` promised (nil: none).
local function sem_promise(waiters, promises, client, count, held, now)
  local total = count + (held or 0)
  local score = -(now + SEM_PROMISE_MS)
  if total == 1 then
    redis.call('ZADD', waiters, score, '@' .. client)
  else
    if held == 1 then redis.call('ZREM', waiters, '@' .. client) end
    redis.call('HSET', promises, client, total)
    redis.call('PEXPIRE', promises, SEM_PROMISE_MS)
    redis.call('ZADD', waiters, score, '%' .. client)
  end
  sem_keep_waiters(waiters, SEM_PROMISE_MS, now)
end

-- sem_unpromise(waiters, promises, client, count): `count` permits promised to the client were
-- used or handed back (math.huge: all of them). One command when its promise was one permit.
local function sem_unpromise(waiters, promises, client, count)
  if count <= 0 then return end
  if redis.call('ZREM', waiters, '@' .. client) == 1 and count ~= math.huge then return end
  local score = redis.call('ZSCORE', waiters, '%' .. client)
  if not score then return end
  local left = (tonumber(redis.call('HGET', promises, client)) or 0) - count
  if left > 1 then
    redis.call('HSET', promises, client, left)
    return
  end
  redis.call('ZREM', waiters, '%' .. client)
  redis.call('HDEL', promises, client)
  if left == 1 then redis.call('ZADD', waiters, score, '@' .. client) end
end

-- sem_wake(waiters, needs, promises, wake_prefix, publish, free, now): non-fair wake-up when
-- `free` permits are free in all (not only those the caller freed: a request for 2 wakes when
-- the second of two single releases makes 2 free). The budget is what is free and not promised
-- to clients woken before (promises that ran out are dropped). Clients in the waiter set,
-- longest registered first, each with its need hint ('<smallest local request>,<all local
-- requests>'); a client whose smallest request does not fit what is left is skipped (it stays
-- registered), the others get ONE notice each naming how many permits they may use, are
-- promised those, and leave the set (a waiter that still waits registers again). A notice that
-- reaches nobody is a dead client: dropped, and its share goes to the next.
local function sem_wake(waiters, needs, promises, wake_prefix, publish, free, now)
  if free <= 0 then return end
  if sem_set.no_waiters then return end
  local entries = redis.call('ZRANGE', waiters, 0, 63, 'WITHSCORES')
  if entries[1] == SEM_KEEPER and #entries == 2 then
    redis.call('ZREM', waiters, SEM_KEEPER)
    entries, sem_set.waiters_lives = {}, 0
  end
  if #entries == 0 then
    sem_mark(KEYS[1], '#w')
    sem_set.no_waiters = true
    return
  end
  local budget, held, clients = free, {}, {}
  for i = 1, #entries, 2 do
    local name, score = entries[i], tonumber(entries[i + 1])
    if name == SEM_KEEPER then
      -- The keeper: nobody's.
    elseif score >= 0 then
      clients[#clients + 1] = name
      clients[name] = score
    else
      local client, many = string.sub(name, 2), string.sub(name, 1, 1) == '%'
      if -score > now then
        local count = many and (tonumber(redis.call('HGET', promises, client)) or 0) or 1
        budget = budget - count
        held[client] = count
      else
        redis.call('ZREM', waiters, name)
        if many then redis.call('HDEL', promises, client) end
      end
    end
  end
  for _, client in ipairs(clients) do
    if budget <= 0 then return end
    local hinted = sem_hinted(clients[client])
    local hint = hinted and redis.call('HGET', needs, client) or SEM_NO_HINT
    local smallest, total = string.match(hint, '^(%d+),(%d+)$')
    smallest, total = tonumber(smallest) or 1, tonumber(total) or 1
    if smallest <= budget then
      local give = math.min(total, budget)
      redis.call('ZREM', waiters, client)
      if hinted then redis.call('HDEL', needs, client) end
      if notice(publish, wake_prefix .. client, tostring(give)) > 0 then
        budget = budget - give
        sem_promise(waiters, promises, client, give, held[client], now)
        held[client] = give + (held[client] or 0)
      end
    end
  end
end

-- Fair semaphore: the queue holds waiting calls '<client id>|<n>|<count>' (fair-queue.lua).
local function sem_waiter_need(waiter)
  return tonumber(string.match(waiter, '|(%d+)$')) or 1
end

-- sem_head(queue, timeouts, now, read): the head of the fair queue that has not lost its place
-- (those that did are dropped first), or nil. One read when the queue is empty; `read`: the head
-- as this call read it already (false: the queue is empty; nil: read it here).
local function sem_head(queue, timeouts, now, read)
  if sem_set.no_queue then return nil end
  local head = read
  if head == nil then head = redis.call('ZRANGE', queue, 0, 0)[1] elseif head == false then head = nil end
  if head ~= nil then
    local ends = redis.call('ZSCORE', timeouts, head)
    if ends and tonumber(ends) > now then return head end
    drop_expired(queue, timeouts, now)
    head = redis.call('ZRANGE', queue, 0, 0)[1]
  end
  if head == nil then
    sem_mark(KEYS[1], '#q')
    sem_set.no_queue = true
  end
  return head
end

-- sem_turn(queue, timeouts, turn_prefix, publish, free_before, free, now, read): tells the head of
-- the queue that it is its turn when its request fits `free` permits and did not fit
-- `free_before` (it was told then already). Only the head: nobody overtakes it. `read`: as
-- sem_head's.
local function sem_turn(queue, timeouts, turn_prefix, publish, free_before, free, now, read)
  if free <= 0 then return end
  local head = sem_head(queue, timeouts, now, read)
  if head == nil then return end
  local need = sem_waiter_need(head)
  if need <= free and need > free_before then
    notice(publish, turn_prefix .. string.match(head, '^[^|]*'), head)
  end
end

-- sem_freed(publish, free_before, free, now): permits became free, or promised permits came
-- back (a release, leases that ended, a woken client that gave up): wake non-fair waiters for
-- every free, unpromised permit, and tell the fair head if it fits now and did not before.
-- Takes the common keys (above).
local function sem_freed(publish, free_before, free, now)
  sem_wake(KEYS[2], KEYS[3], KEYS[5], KEYS[4], publish, free, now)
  sem_turn(KEYS[6], KEYS[7], KEYS[8], publish, free_before, free, now)
end
