-- Sliding window counter, mirroring io.github.ratelimit.core.SlidingWindowCounter: the state is
-- "<window start> <current> <previous>" (microseconds, tokens). A request is allowed when
-- previous * overlap + (current + cost) * period <= limit * period. Exact integer arithmetic: the
-- products stay below limit * period in microseconds (< 2^61 / 1000 < 2^53); the quotients Java takes
-- in nanoseconds are computed exactly by floordiv_ns. The key expires when the state is fresh again.
local function counter_write(key, now, period, start, current, previous)
  local left = 0
  if current > 0 then
    left = start + 2 * period - now
  elseif previous > 0 then
    left = start + period - now
  end
  if left > 0 then
    redis.call('SET', key, int(start) .. ' ' .. int(current) .. ' ' .. int(previous) .. ' ' .. int(period),
      'PX', ttl_ms(left))
  else
    redis.call('DEL', key)
  end
end

local function counter_roll(now, period, saved_start, saved_current, saved_previous)
  local start = floordiv(now, period) * period
  if start <= saved_start then
    return saved_start, saved_current, saved_previous
  end
  if start == saved_start + period then
    return start, 0, saved_current
  end
  return start, 0, 0
end

-- The state also holds the period it was written with. Of another period (the policy changed), it is
-- moved as SlidingWindowCounter#moveTo does: the estimate now, rounded up, becomes the count of the
-- new period's current window (written back at once); a state without a period is of the period asked.
local function counter_read(key, now, period)
  local state = redis.call('GET', key)
  if state then
    local saved_start, saved_current, saved_previous, saved_period =
      string.match(state, '^(%-?%d+) (%d+) (%d+) ?(%d*)$')
    if saved_start then
      saved_period = tonumber(saved_period) or period
      local start, current, previous = counter_roll(now, saved_period, tonumber(saved_start),
        tonumber(saved_current), tonumber(saved_previous))
      if saved_period == period then
        return start, current, previous
      end
      if current == 0 and previous == 0 then
        if not read_only then
          redis.call('DEL', key)
        end
      else
        local overlap = saved_period - math.max(0, now - start)
        local weighted = -floordiv(-(previous * overlap), saved_period)
        start, current, previous = floordiv(now, period) * period, weighted + current, 0
        if not read_only then
          counter_write(key, now, period, start, current, previous)
        end
        return start, current, previous
      end
    end
  end
  return floordiv(now, period) * period, 0, 0
end

-- The time until the estimate leaves room for `room` tokens, which it does not now, as
-- SlidingWindowCounter#untilRoomFor: (microseconds, nanoseconds to add).
local function counter_until_room(p, current, previous, overlap, room)
  local period = p.period
  local max = p.limit
  local left = max - current - room
  local us, ns
  if left >= 0 then
    -- The previous window's weight has to shrink enough, within this window.
    local q, f = floordiv_ns(left * period, previous)
    us, ns = overlap - q, 0
    if f > 0 then
      us, ns = us - 1, 1000 - f
    end
  else
    -- Only once this window has become the previous one, weighing less and less.
    us, ns = overlap, 0
    if current > 0 then
      local q, f = floordiv_ns((max - room) * period, current)
      if period > q then
        us = us + period - q
        if f > 0 then
          us, ns = us - 1, 1000 - f
        end
      end
    end
  end
  return us, ns
end

local function counter_decision(allowed, p, start, current, previous, now, cost, retry, retry_ns)
  local period = p.period
  local max = p.limit
  local overlap = period - math.max(0, now - start)
  local remaining = math.max(0, floordiv(max * period - previous * overlap - current * period, period))
  local reset = 0
  if current > 0 then
    reset = overlap + period
  elseif previous > 0 then
    reset = overlap
  end
  -- Additional quota: room for one more request of the cost than now (the whole quota at most).
  local next, next_ns = 0, 0
  if current > 0 or previous > 0 then
    local c = math.max(1, cost)
    local room = math.min(max, (jdiv(remaining, c) + 1) * c)
    next, next_ns = counter_until_room(p, current, previous, overlap, room)
  end
  return decision(allowed, remaining, reset, retry, 0, retry_ns, next, next_ns)
end

ALGORITHMS['sliding-window-counter'] = {

  acquire = function(key, now, p, cost, max_wait)
    local period = p.period
    local max = p.limit
    local start, current, previous = counter_read(key, now, period)
    local overlap = period - math.max(0, now - start)
    if previous * overlap + (current + cost) * period > max * period then
      local retry, retry_ns = counter_until_room(p, current, previous, overlap, cost)
      return counter_decision(false, p, start, current, previous, now, cost, retry, retry_ns)
    end
    current = current + cost
    counter_write(key, now, period, start, current, previous)
    return counter_decision(true, p, start, current, previous, now, cost, 0, 0)
  end,

  release = function(key, now, p, cost)
    local start, current, previous = counter_read(key, now, p.period)
    current = math.max(0, current - cost)
    counter_write(key, now, p.period, start, current, previous)
    return counter_decision(true, p, start, current, previous, now, cost, 0, 0)
  end
}
