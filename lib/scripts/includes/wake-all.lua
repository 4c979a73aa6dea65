--- @include "notice.lua"

-- For the scripts that let every waiting client in (read-write lock readers, an opened latch).
-- wake_all(waiters, wake_prefix, publish): wakes EVERY client in the waiter set, each through
-- its own channel (each then wakes all its local readers). The set is emptied: a client whose
-- readers still wait registers again with their next attempt. A PUBLISH that reaches nobody is
-- a dead client, dropped like the rest.
-- Returns how many live clients were woken.
local function wake_all(waiters, wake_prefix, publish)
  local woken = 0
  for _, client_id in ipairs(redis.call('ZRANGE', waiters, 0, -1)) do
    woken = woken + notice(publish, wake_prefix .. client_id)
  end
  redis.call('DEL', waiters)
  return woken
end
