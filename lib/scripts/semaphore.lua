-- Shared functions of the semaphore scripts, prepended by semaphore-scripts.ts (after
-- server-time.lua). A semaphore's permits out are ONE sorted set: each acquisition is a member
-- '<count>:<permit id>' scored by the end of its lease (server ms). Lease ends are above 2^32;
-- below them the set keeps its bookkeeping, at most four members (SEM_LOW), read with the
-- earliest lease in one ZRANGE by every script:
--   '#'   score: how many permits are out in all (absent: none)
--   '#e'  score: minus the server ms until which the set is known to live (sem_keep_permits)
--   '#q'  the fair queue was seen empty since (absent: unknown, it is read)
--   '#w'  the non-fair waiter set was seen empty since (absent: unknown, it is read)
-- A script that adds to the queue or the waiter set drops '#q' or '#w' first. The set expires
-- when its last lease ends (at most a second later: sem_keep_permits), and is deleted with its
-- bookkeeping when no permit is out: nothing outlives holders that all died. Every script
-- prunes ended leases first, so a dead holder's permits come back when its lease ends, whoever
-- calls next.
-- The scripts that change a semaphore all take the same keys (semaphore-scripts.ts):
-- KEYS[1] permits (above)    KEYS[2] waiter set (non-fair)   KEYS[3] need hints
-- KEYS[4] wake channel prefix                                 KEYS[5] promises
-- KEYS[6] fair queue         KEYS[7] fair timeouts            KEYS[8] turn channel prefix
local SEM_LEASES = 4294967296
local SEM_LOW = 4
-- How long permits offered to a woken client stay promised to it (sem_wake) if it neither
-- takes them nor hands them back: a client that died right after its notice.
local SEM_PROMISE_MS = 1000

-- A key that must live at least `ms` more is given a second more than that (SEM_SLACK_MS), so
-- calls in a row do not each rewrite its expiry (a PEXPIRE about once a second).
local SEM_SLACK_MS = 1000

-- What this call knows of the permit set (sem_prune reads it): whether it exists, until when it
-- surely lives (0: unknown), and whether the fair queue and the waiter set were seen empty.
local sem_set = { exists = false, lives = 0, no_queue = false, no_waiters = false }

-- sem_count(member): how many permits an acquisition holds.
local function sem_count(member)
  return tonumber(string.match(member, '^(%d+):'))
end

-- sem_set_out(permits, out): the count of permits out; none: the set goes, bookkeeping and all.
local function sem_set_out(permits, out)
  if out > 0 then
    redis.call('ZADD', permits, out, '#')
  else
    redis.call('DEL', permits)
    sem_set.exists, sem_set.lives, sem_set.no_queue, sem_set.no_waiters = false, 0, false, false
  end
end

-- sem_keep(key, ms): the key lives at least `ms` more (never shortened).
local function sem_keep(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms + SEM_SLACK_MS) end
end

-- sem_keep_permits(permits, ms, now): as sem_keep for the permit set, which remembers ('#e') until
-- when it surely lives: no command while that is far enough. Others only lengthen its expiry
-- (the renewals), so the remembered time is never later than the real one.
local function sem_keep_permits(permits, ms, now)
  if sem_set.lives >= now + ms then return end
  local ttl = redis.call('PTTL', permits)
  if ttl < ms then
    redis.call('PEXPIRE', permits, ms + SEM_SLACK_MS)
    ttl = ms + SEM_SLACK_MS
  end
  sem_set.lives = now + ttl
  redis.call('ZADD', permits, -sem_set.lives, '#e')
end

-- sem_mark(permits, marker): records that the queue ('#q') or the waiter set ('#w') was seen
-- empty, when the set exists (a marker never makes a set, nor one without an expiry).
local function sem_mark(permits, marker)
  if sem_set.exists then redis.call('ZADD', permits, -1, marker) end
end

-- sem_prune(permits, now): drops acquisitions whose lease ended (at most 100 per call; the rest
-- are counted out until a later call drops them: never an over-grant). One read when no lease
-- ended: the set's lowest entries are its bookkeeping and the earliest lease.
-- Returns the permits out after pruning, how many the pruning freed, and the earliest lease end
-- (server ms; -1 when no permit is out; nil when unknown: pruning ran, see sem_next_end).
local function sem_prune(permits, now)
  local low = redis.call('ZRANGE', permits, 0, SEM_LOW, 'WITHSCORES')
  local out, first = 0, nil
  sem_set.exists = #low > 0
  for i = 1, #low, 2 do
    local name, score = low[i], tonumber(low[i + 1])
    if score >= SEM_LEASES then
      first = score
      break
    end
    if name == '#' then
      out = score
    elseif name == '#e' then
      sem_set.lives = -score
    elseif name == '#q' then
      sem_set.no_queue = true
    elseif name == '#w' then
      sem_set.no_waiters = true
    end
  end
  if first == nil then return out, 0, -1 end
  if first > now then return out, 0, first end
  local dead = redis.call('ZRANGE', permits, SEM_LEASES, now, 'BYSCORE', 'LIMIT', 0, 100)
  local freed = 0
  for _, member in ipairs(dead) do freed = freed + sem_count(member) end
  redis.call('ZREM', permits, unpack(dead))
  out = out - freed
  sem_set_out(permits, out)
  return out, freed, nil
end

-- sem_next_end(permits, now, first): ms until the earliest lease ends (at least 1), or -1 when
-- none; `first` is sem_prune's earliest lease end (read again when nil).
local function sem_next_end(permits, now, first)
  if first == nil then
    first = redis.call('ZRANGE', permits, SEM_LEASES, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')[2]
    if not first then return -1 end
  end
  if tonumber(first) < 0 then return -1 end
  return math.max(1, tonumber(first) - now)
end

-- sem_grant(permits, member, count, out, lease, now): the acquisition takes its permits unless
-- its member is in the set already (a resend of a granted call: nothing changes); the set lives
-- until its last lease ends (and at most SEM_SLACK_MS more). Returns the permits out now, or nil
-- for a resend.
local function sem_grant(permits, member, count, out, lease, now)
  if redis.call('ZADD', permits, 'NX', now + lease, member) == 0 then return nil end
  sem_set.exists = true
  out = out + count
  sem_set_out(permits, out)
  sem_keep_permits(permits, lease, now)
  return out
end

-- sem_notice(publish, channel, message): publishes; returns how many connections received it
-- ('publish-cluster': classic PUBLISH on a Cluster counts one node only, so 1 is assumed).
local function sem_notice(publish, channel, message)
  if publish == 'publish-cluster' then
    redis.call('PUBLISH', channel, message)
    return 1
  end
  return redis.call(publish, channel, message)
end

-- A waiter's score in the waiter set is when it registered (server ms), plus SEM_HINTED when the
-- need hints hash may hold a hint for it. A client without one waits for single permits ('1,1',
-- the usual case): nothing is written for it, and a wake-up reads no hint.
local SEM_HINTED = 0.5
local SEM_NO_HINT = '1,1'

local function sem_hinted(score)
  return tonumber(score) % 1 ~= 0
end

-- sem_register(waiters, needs, client, hint, sleep_ms, mode, now): a waiting client (re)registers
-- with its need hint (the waiter modes and placement are waiter-set.lua's: a client keeps its
-- first place; one a notice woke goes back to the front). Both keys may expire a second after
-- the client's sleep ends: they cannot outlive clients that all died.
local function sem_register(waiters, needs, client, hint, sleep_ms, mode, now)
  if sem_set.no_waiters then
    redis.call('ZREM', KEYS[1], '#w')
    sem_set.no_waiters = false
  end
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
  sem_keep(waiters, sleep_ms + 1000)
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
  sem_keep(waiters, SEM_PROMISE_MS)
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
  if #entries == 0 then
    sem_mark(KEYS[1], '#w')
    sem_set.no_waiters = true
    return
  end
  local budget, held, clients = free, {}, {}
  for i = 1, #entries, 2 do
    local name, score = entries[i], tonumber(entries[i + 1])
    if score >= 0 then
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
      if sem_notice(publish, wake_prefix .. client, tostring(give)) > 0 then
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

-- sem_head(queue, timeouts, now): the head of the fair queue that has not lost its place (those
-- that did are dropped first), or nil. One read when the queue is empty.
local function sem_head(queue, timeouts, now)
  if sem_set.no_queue then return nil end
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
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

-- sem_turn(queue, timeouts, turn_prefix, publish, free_before, free, now): tells the head of the
-- queue that it is its turn when its request fits `free` permits and did not fit `free_before`
-- (it was told then already). Only the head: nobody overtakes it.
local function sem_turn(queue, timeouts, turn_prefix, publish, free_before, free, now)
  if free <= 0 then return end
  local head = sem_head(queue, timeouts, now)
  if head == nil then return end
  local need = sem_waiter_need(head)
  if need <= free and need > free_before then
    sem_notice(publish, turn_prefix .. string.match(head, '^[^|]*'), head)
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
