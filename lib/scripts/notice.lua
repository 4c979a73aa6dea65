-- Shared function, prepended by the registry to every script that wakes waiters (before
-- wake-one.lua, fair-queue.lua and semaphore-waiters.lua, which call it).
--
-- notice(publish, channel, message): publishes a wake-up notice (`message`, '1' when nil) on a
-- waiting client's channel, the way that client listens, whichever client publishes: the channel
-- ends with the client's listener id, which ends with '~s' when the client keeps sharded
-- subscriptions (lib/keys.ts). `publish` says what the deployment offers: 'spublish' a Cluster
-- with sharded pub/sub, 'publish-cluster' a Cluster without it, 'publish' one server.
-- Returns how many connections received it. A classic PUBLISH on a Cluster counts the receivers
-- of this node only: 0 proves nothing there, so the client is taken as reached (1).
local function notice(publish, channel, message)
  message = message or '1'
  if publish == 'spublish' and string.sub(channel, -2) == '~s' then return redis.call('SPUBLISH', channel, message) end
  local reached = redis.call('PUBLISH', channel, message)
  if publish == 'publish' then return reached end
  return 1
end
