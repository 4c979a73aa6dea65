-- Shared function, prepended to the election scripts that change who leads or what it says.
-- announce(publish, channel, message): publishes a change on the election's channel, which every
-- observing client subscribes to. publish: 'publish', 'spublish', or 'publish-cluster' (classic
-- PUBLISH on a Cluster). Messages: 'L:<epoch>:<rev>:<value>' a leader and its value (rev counts
-- the proclaims of that epoch from 0), 'V:<epoch>' leader <epoch> stepped down.
local function announce(publish, channel, message)
  if publish == 'publish-cluster' then publish = 'publish' end
  redis.call(publish, channel, message)
end
