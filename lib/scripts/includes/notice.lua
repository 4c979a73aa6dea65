-- For every script that wakes waiters (through wake-one.lua, fair-queue.lua, semaphore-waiters.lua).
--
-- notice(publish, channel, message): publishes a wake-up notice (`message`, '1' when nil) on a
-- waiting client's channel, the way that client listens, whichever client publishes. `publish`
-- says what the deployment offers: 'spublish' a Cluster with sharded pub/sub, 'publish-cluster'
-- a Cluster without it, 'publish' one server. On a Cluster with it, clients listen sharded
-- (SSUBSCRIBE) unless their listener id, which ends the channel, ends with '~c': they listen by
-- classic pub/sub (lib/keys.ts). Returns how many connections received it. A classic PUBLISH on
-- a Cluster counts the receivers of this node only: 0 proves nothing there, so the client is
-- taken as reached (1).
local function notice(publish, channel, message)
  message = message or '1'
  if publish == 'spublish' and string.sub(channel, -2) ~= '~c' then return redis.call('SPUBLISH', channel, message) end
  local reached = redis.call('PUBLISH', channel, message)
  if publish == 'publish' then return reached end
  return 1
end
