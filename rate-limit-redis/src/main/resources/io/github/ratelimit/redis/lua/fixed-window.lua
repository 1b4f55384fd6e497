-- Fixed window, mirroring io.github.ratelimit.core.FixedWindow: windows aligned to the epoch, the
-- state is "<window start> <count> <window end>" (microseconds, tokens). A missing key is an empty
-- window; the key expires when its window ends. A window keeps its end when the period changes (a new
-- period takes effect from the next window); a state without an end is of the period asked.
local function fixed_window_read(key, now, period)
  local state = redis.call('GET', key)
  if state then
    local saved_start, count, saved_end = string.match(state, '^(%-?%d+) (%d+) ?(%-?%d*)$')
    if saved_start then
      saved_start = tonumber(saved_start)
      saved_end = tonumber(saved_end) or (saved_start + period)
      if now < saved_end then
        return saved_start, tonumber(count), saved_end
      end
    end
  end
  local start = floordiv(now, period) * period
  return start, 0, start + period
end

local function fixed_window_write(key, now, start, count, window_end)
  local left = window_end - now
  if count > 0 and left > 0 then
    redis.call('SET', key, int(start) .. ' ' .. int(count) .. ' ' .. int(window_end), 'PX', ttl_ms(left))
  else
    redis.call('DEL', key)
  end
end

ALGORITHMS['fixed-window'] = {

  acquire = function(key, now, p, cost, max_wait)
    local start, count, window_end = fixed_window_read(key, now, p.period)
    local max = p.limit
    local until_end = window_end - now
    if count + cost > max then
      return decision(false, math.max(0, max - count), until_end, until_end, 0, 0, until_end)
    end
    count = count + cost
    fixed_window_write(key, now, start, count, window_end)
    return decision(true, max - count, until_end, 0, 0, 0, until_end)
  end,

  release = function(key, now, p, cost)
    local start, count, window_end = fixed_window_read(key, now, p.period)
    count = math.max(0, count - cost)
    fixed_window_write(key, now, start, count, window_end)
    local reset = 0
    if count > 0 then
      reset = window_end - now
    end
    return decision(true, math.max(0, p.limit - count), reset, 0, 0, 0, reset)
  end
}
