--- @include "notice.lua"

-- For the scripts that free a lock.
--
-- wake_one(waiters, wake_prefix, publish): wakes ONE waiting client, the longest registered.
-- A client is dropped from the set when woken; its waiter registers again if it still waits.
-- A notice that reaches no connection means that client is gone (no subscriber), so it is
-- dropped for good and the next one is tried. The loop is bounded; every dead entry it skips
-- is removed, so the cost is amortised O(1) per release.
-- Returns 1 when a live client was woken, 0 when nobody was.
local function wake_one(waiters, wake_prefix, publish)
  for _ = 1, 16 do
    local head = redis.call('ZPOPMIN', waiters)
    if head[1] == nil then return 0 end
    if notice(publish, wake_prefix .. head[1]) > 0 then return 1 end
  end
  return 0
end
