-- Open a hold for adoption (lease.handOff()): a one-shot claim that one adopt-hold-3.lua call
-- may take, and a lease that covers the gap until then, and no more.
-- KEYS[1] main key of the hold, KEYS[2] readers set (as in extend-hold-3.lua)
-- KEYS[3] the holder's claim record: 'open:' .. handle id until adopted (one per holder: a later
--         hand-off of the same holder replaces it, so an older handle can no longer be adopted)
-- ARGV[1] kind: 'lock', 'read', 'write' or 'permit'
-- ARGV[2] holder (held-lease.lua)
-- ARGV[3] watchdog mode: ms the hold lives from now (the gap a handle covers: `adoptWithin`),
--         sooner or later than it would have; '0' keeps a fixed lease as it is
-- ARGV[4] handle id (random; a resend of this call changes nothing more)
-- Returns { hold count, ms left of its lease, fencing token or '' }; -1 when the holder holds
-- nothing; -3 when the owner holds the other side of the same read-write lock too (handing off
-- one side would let two processes read and write at once).
--- @include "includes/server-time.lua"
--- @include "includes/read-write-holds.lua"
--- @include "includes/held-lease.lua"

local now = server_ms()
local kind, holder = ARGV[1], ARGV[2]
local count, left = held_state(kind, KEYS[1], KEYS[2], holder, now)
if not count then return -1 end
local open = 'open:' .. ARGV[4]
if redis.call('GET', KEYS[3]) ~= open then
  local owner = string.sub(holder, 3)
  if kind == 'read' and redis.call('HGET', KEYS[1], 'writer') == owner then return -3 end
  if kind == 'write' and redis.call('HEXISTS', KEYS[1], 'r:' .. owner) == 1 then return -3 end
  local ms = tonumber(ARGV[3])
  if ms > 0 then
    -- Nobody renews it until it is adopted; unadopted, it must not outlive the gap.
    move_hold(kind, KEYS[1], KEYS[2], holder, ms, now, true)
    count, left = held_state(kind, KEYS[1], KEYS[2], holder, now)
  end
  redis.call('SET', KEYS[3], open, 'PX', math.max(1, left))
end
return { count, left, fencing_token(kind, KEYS[1]) }
