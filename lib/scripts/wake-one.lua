-- Shared function, prepended by the registry to scripts that free a lock.
-- wake_one(waiters, wake_prefix, publish): wakes ONE waiting client, the longest registered.
-- A client is dropped from the set when woken; its waiter registers again if it still waits.
-- PUBLISH/SPUBLISH return how many connections received the notice: 0 means that client is
-- gone (no subscriber), so it is dropped for good and the next one is tried. The loop is
-- bounded; every dead entry it skips is removed, so the cost is amortised O(1) per release.
-- publish: 'publish', 'spublish', or 'publish-cluster' (classic PUBLISH on a Cluster: the
-- count covers this node only, so 0 proves nothing and the first client is taken as woken).
-- Returns 1 when a live client was (or may have been) woken, 0 when nobody was.
local function wake_one(waiters, wake_prefix, publish)
  local blind = publish == 'publish-cluster'
  local command = blind and 'publish' or publish
  for _ = 1, 16 do
    local head = redis.call('ZPOPMIN', waiters)
    if head[1] == nil then return 0 end
    if redis.call(command, wake_prefix .. head[1], '1') > 0 or blind then return 1 end
  end
  return 0
end
