-- Watchdog renewal of many read and write holds of read-write locks in one call (layout:
-- read-write-holds.lua; all KEYS in one slot on a Cluster). Renews only a hold whose owner still
-- has it and whose lease has not ended: never re-acquires, and never keeps another reader alive.
-- KEYS[2i-1] lock hash i
-- KEYS[2i]   its readers sorted set
-- ARGV[1]    new lease, ms
-- ARGV[i+1]  hold i: 'r:' or 'w:' followed by the owner id
-- Returns a table, one entry per hold: 1 renewed; 0 the lock is gone; 2 the owner no longer
-- has that hold but others hold the lock.
local now = server_ms()
local ends = now + tonumber(ARGV[1])
local renewed = {}
for i = 1, #KEYS / 2 do
  local hash, readers, hold = KEYS[2 * i - 1], KEYS[2 * i], ARGV[i + 1]
  local owner = string.sub(hold, 3)
  local alive
  if string.sub(hold, 1, 1) == 'r' then
    local lease_end = tonumber(redis.call('ZSCORE', readers, owner) or '0')
    alive = lease_end > now and redis.call('HEXISTS', hash, hold) == 1
    if alive then rw_extend_read(readers, owner, ends) end
  else
    local writer = redis.call('HMGET', hash, 'writer', 'wuntil')
    alive = writer[1] == owner and tonumber(writer[2]) > now
    if alive then rw_extend_write(hash, ends) end
  end
  if alive then
    rw_settle(hash, readers)
    renewed[i] = 1
  elseif redis.call('EXISTS', hash) == 1 then
    renewed[i] = 2
  else
    renewed[i] = 0
  end
end
return renewed
