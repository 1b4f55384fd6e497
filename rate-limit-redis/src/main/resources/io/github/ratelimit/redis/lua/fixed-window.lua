-- Fixed window, mirroring io.github.ratelimit.core.FixedWindow: windows aligned to the epoch, the
-- state is "<window start> <count>" (microseconds, tokens). A missing key is an empty window; the
-- key expires when its window ends.
local function fixed_window_read(key, now, period)
  local start = floordiv(now, period) * period
  local state = redis.call('GET', key)
  if state then
    local saved_start, count = string.match(state, '^(%-?%d+) (%d+)$')
    saved_start = tonumber(saved_start)
    if saved_start >= start then
      return saved_start, tonumber(count)
    end
  end
  return start, 0
end

local function fixed_window_write(key, now, period, start, count)
  local left = start + period - now
  if count > 0 and left > 0 then
    redis.call('SET', key, int(start) .. ' ' .. int(count), 'PX', ttl_ms(left))
  else
    redis.call('DEL', key)
  end
end

ALGORITHMS['fixed-window'] = {

  acquire = function(key, now, p, cost, max_wait)
    local period = p.period
    local start, count = fixed_window_read(key, now, period)
    local max = p.limit
    local until_end = start + period - now
    if count + cost > max then
      return decision(false, max - count, until_end, until_end, 0, 0, until_end)
    end
    count = count + cost
    fixed_window_write(key, now, period, start, count)
    return decision(true, max - count, until_end, 0, 0, 0, until_end)
  end,

  release = function(key, now, p, cost)
    local period = p.period
    local start, count = fixed_window_read(key, now, period)
    count = math.max(0, count - cost)
    fixed_window_write(key, now, period, start, count)
    local reset = 0
    if count > 0 then
      reset = start + period - now
    end
    return decision(true, p.limit - count, reset, 0, 0, 0, reset)
  end
}
