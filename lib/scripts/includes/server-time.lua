-- server_ms(): the server's clock in ms (never a client's clock: clients disagree).
local function server_ms()
  local now = redis.call('TIME')
  return now[1] * 1000 + math.floor(now[2] / 1000)
end
