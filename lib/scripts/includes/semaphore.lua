--- @include "server-time.lua"

-- For the semaphore scripts. A semaphore's permits out are ONE sorted set: each acquisition is a member
-- '<count>:<permit id>' scored by the end of its lease (server ms). Lease ends are above 2^32;
-- below them the set keeps its bookkeeping, at most five members (SEM_LOW), read with the
-- earliest lease in one ZRANGE by every script:
--   '#'   score: how many permits are out in all (absent: none)
--   '#e'  score: minus the server ms until which the set is known to live (sem_keep_permits)
--   '#eq' score: the same for the fair queue and its timeouts set (semaphore-fair-acquire-8.lua)
--   '#q'  the fair queue was seen empty since (absent: unknown, it is read)
--   '#w'  score -1: the non-fair waiter set was seen empty since; below: minus the server ms
--         until which it is known to live (sem_keep_waiters); absent: unknown, it is read
-- A script that adds to the queue or the waiter set drops '#q' or '#w' first. The set expires
-- when its last lease ends (at most a second later: sem_keep_permits), and is deleted with its
-- bookkeeping when no permit is out: nothing outlives holders that all died. Every script
-- prunes ended leases first, so a dead holder's permits come back when its lease ends, whoever
-- calls next.
-- The waiter set, promises and the fair queue's turns are semaphore-waiters.lua's, which follows.
-- The scripts that change a semaphore all take the same keys (semaphore-scripts.ts):
-- KEYS[1] permits (above)    KEYS[2] waiter set (non-fair)   KEYS[3] need hints
-- KEYS[4] wake channel prefix                                 KEYS[5] promises
-- KEYS[6] fair queue         KEYS[7] fair timeouts            KEYS[8] turn channel prefix
local SEM_LEASES = 4294967296
local SEM_LOW = 5
-- A key that must live at least `ms` more is given a second more than that (SEM_SLACK_MS), so
-- calls in a row do not each rewrite its expiry (a PEXPIRE about once a second).
local SEM_SLACK_MS = 1000

-- What this call knows of the permit set (sem_prune reads it): whether it exists, until when it,
-- the waiter set and the fair queue surely live (0: unknown), and whether the fair queue and the
-- waiter set were seen empty.
local sem_set = { exists = false, lives = 0, waiters_lives = 0, queue_lives = 0, no_queue = false, no_waiters = false }

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
    sem_set.waiters_lives, sem_set.queue_lives = 0, 0
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
  if not sem_set.exists then
    -- Made by this call: no expiry yet, nothing to read (and '#e' is written by the next grant).
    redis.call('PEXPIRE', permits, ms + SEM_SLACK_MS)
    sem_set.exists, sem_set.lives = true, now + ms + SEM_SLACK_MS
    return
  end
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
    elseif name == '#eq' then
      sem_set.queue_lives = -score
    elseif name == '#q' then
      sem_set.no_queue = true
    elseif name == '#w' then
      if score == -1 then sem_set.no_waiters = true else sem_set.waiters_lives = -score end
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
  out = out + count
  sem_set_out(permits, out)
  sem_keep_permits(permits, lease, now)
  return out
end
