-- Sliding window log, mirroring io.github.ratelimit.core.SlidingWindowLog: a Redis list of the
-- timestamps (epoch microseconds) of the tokens admitted in the last period, oldest first, one entry
-- per token. An entry at t counts until t + period; the key expires when its newest entry leaves.
local function log_expire(key, now, period)
  local cutoff = now - period
  local size = redis.call('LLEN', key)
  if size == 0 or tonumber(redis.call('LINDEX', key, 0)) > cutoff then
    return size
  end
  if tonumber(redis.call('LINDEX', key, -1)) <= cutoff then
    redis.call('DEL', key)
    return 0
  end
  -- Binary search for the first entry still in the window (entries never decrease).
  local low, high = 1, size - 1
  while low < high do
    local middle = math.floor((low + high) / 2)
    if tonumber(redis.call('LINDEX', key, middle)) <= cutoff then
      low = middle + 1
    else
      high = middle
    end
  end
  redis.call('LTRIM', key, low, -1)
  return size - low
end

local function log_expire_at_newest(key, now, period, size)
  if size == 0 then
    redis.call('DEL', key)
    return 0
  end
  local newest = tonumber(redis.call('LINDEX', key, -1))
  local left = newest + period - now
  redis.call('PEXPIRE', key, ttl_ms(math.max(left, 0)))
  return left
end

ALGORITHMS['sliding-window-log'] = {

  acquire = function(key, now, p, cost, max_wait)
    local period = p.period
    local max = p.limit
    local size = log_expire(key, now, period)
    if size + cost > max then
      local oldest_to_leave = tonumber(redis.call('LINDEX', key, size + cost - max - 1))
      local newest = tonumber(redis.call('LINDEX', key, -1))
      local oldest = tonumber(redis.call('LINDEX', key, 0))
      -- The key lives as long as its newest entry counts under the period in force (which may have
      -- changed since it was written).
      redis.call('PEXPIRE', key, ttl_ms(newest + period - now))
      return decision(false, math.max(0, max - size), newest + period - now, oldest_to_leave + period - now, 0, 0,
        oldest + period - now)
    end
    local timestamp = now
    if size > 0 then
      timestamp = math.max(now, tonumber(redis.call('LINDEX', key, -1)))
    end
    local entry = int(timestamp)
    local pushed = 0
    while pushed < cost do
      local chunk = {}
      for i = 1, math.min(1000, cost - pushed) do
        chunk[i] = entry
      end
      redis.call('RPUSH', key, unpack(chunk))
      pushed = pushed + #chunk
    end
    size = size + cost
    redis.call('PEXPIRE', key, ttl_ms(timestamp + period - now))
    local oldest = tonumber(redis.call('LINDEX', key, 0))
    return decision(true, max - size, timestamp + period - now, 0, 0, 0, oldest + period - now)
  end,

  release = function(key, now, p, cost)
    local size = redis.call('LLEN', key)
    local removed = math.min(cost, size)
    if removed == size then
      redis.call('DEL', key)
    elseif removed > 0 then
      redis.call('LTRIM', key, 0, size - removed - 1)
    end
    size = log_expire(key, now, p.period)
    local reset, next = 0, 0
    if size > 0 then
      reset = log_expire_at_newest(key, now, p.period, size)
      next = tonumber(redis.call('LINDEX', key, 0)) + p.period - now
    end
    return decision(true, math.max(0, p.limit - size), reset, 0, 0, 0, next)
  end
}
