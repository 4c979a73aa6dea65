-- For the election scripts that change who leads or what it says.
-- announce(publish, channel, message): publishes a change on the election's channel, which every
-- observing client subscribes to, each the way its client listens. Observers register nowhere,
-- so on a Cluster with sharded pub/sub ('spublish', notice.lua) a change goes both ways: SPUBLISH
-- for clients that listen sharded, PUBLISH for those that listen classic; elsewhere by PUBLISH.
-- Messages: 'L:<epoch>:<rev>:<value>' a leader and its value (rev counts the proclaims of that
-- epoch from 0), 'V:<epoch>' leader <epoch> stepped down.
local function announce(publish, channel, message)
  if publish == 'spublish' then redis.call('SPUBLISH', channel, message) end
  redis.call('PUBLISH', channel, message)
end
