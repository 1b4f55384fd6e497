-- Read-only checks, mirroring io.github.ratelimit.core.LimiterState#check: would `cost` tokens be
-- taken now? Nothing is written. Appended after the prelude and every algorithm, whose readers it
-- shares; a rejection is the algorithm's own (its acquire writes nothing when it rejects).
-- KEYS and ARGV as in driver.lua for one request (ARGV[2], the operation, is 'check'); the same reply.
local CHECKS = {}

-- The buckets (GcraState#check): as the meter decides, on one read of tat.
local function gcra_check(key, now, p, cost)
  local interval = p.interval
  local tolerance = interval * p.burst
  local tat = tonumber(redis.call('GET', key)) or now
  local base = math.max(tat, now)
  local used = base + cost * interval - now
  if used > tolerance then
    return decision(false, math.max(0, jdiv(tolerance - (base - now), interval)), base - now, used - tolerance, 0, 0,
      math.min(gcra_next(base - now, tolerance, interval), used - tolerance))
  end
  local held = math.max(0, tat - now)
  return decision(true, math.max(0, jdiv(tolerance - held, interval)), held, 0, 0, 0,
    gcra_next(held, tolerance, interval))
end
CHECKS['token-bucket'] = gcra_check
CHECKS['leaky-bucket'] = gcra_check

CHECKS['fixed-window'] = function(key, now, p, cost)
  local start, count = fixed_window_read(key, now, p.period)
  local until_end = start + p.period - now
  if count + cost > p.limit then
    return decision(false, p.limit - count, until_end, until_end, 0, 0, until_end)
  end
  local reset = 0
  if count > 0 then
    reset = until_end
  end
  return decision(true, p.limit - count, reset, 0, 0, 0, reset)
end

CHECKS['sliding-window-counter'] = function(key, now, p, cost)
  local period = p.period
  local start, current, previous = counter_read(key, now, period)
  local overlap = period - math.max(0, now - start)
  if previous * overlap + (current + cost) * period > p.limit * period then
    return ALGORITHMS['sliding-window-counter'].acquire(key, now, p, cost, 0)
  end
  return counter_decision(true, p, start, current, previous, now, cost, 0, 0)
end

-- The log's window without trimming it: the index of its first entry still counted, and its length.
local function log_window(key, now, period)
  local cutoff = now - period
  local length = redis.call('LLEN', key)
  if length == 0 or tonumber(redis.call('LINDEX', key, 0)) > cutoff then
    return 0, length
  end
  if tonumber(redis.call('LINDEX', key, -1)) <= cutoff then
    return length, length
  end
  local low, high = 1, length - 1
  while low < high do
    local middle = math.floor((low + high) / 2)
    if tonumber(redis.call('LINDEX', key, middle)) <= cutoff then
      low = middle + 1
    else
      high = middle
    end
  end
  return low, length
end

CHECKS['sliding-window-log'] = function(key, now, p, cost)
  local period = p.period
  local max = p.limit
  local first, length = log_window(key, now, period)
  local size = length - first
  if size + cost > max then
    local oldest_to_leave = tonumber(redis.call('LINDEX', key, first + size + cost - max - 1))
    local newest = tonumber(redis.call('LINDEX', key, -1))
    local oldest = tonumber(redis.call('LINDEX', key, first))
    return decision(false, max - size, newest + period - now, oldest_to_leave + period - now, 0, 0,
      oldest + period - now)
  end
  local reset, next = 0, 0
  if size > 0 then
    reset = tonumber(redis.call('LINDEX', key, -1)) + period - now
    next = tonumber(redis.call('LINDEX', key, first)) + period - now
  end
  return decision(true, max - size, reset, 0, 0, 0, next)
end

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- ARGV[3] (a deadline) does not apply: a late check changes nothing.
local reply = {}
for i = 1, #KEYS do
  local at = 4 + (i - 1) * 7
  local check = CHECKS[ARGV[at]]
  if not check then
    return redis.error_reply('ERR unknown rate limit algorithm ' .. tostring(ARGV[at]))
  end
  local p = { limit = tonumber(ARGV[at + 3]), period = tonumber(ARGV[at + 4]), burst = tonumber(ARGV[at + 5]),
    interval = tonumber(ARGV[at + 6]) }
  for _, v in ipairs(check(KEYS[i], now, p, tonumber(ARGV[at + 1]))) do
    reply[#reply + 1] = v
  end
end
-- Then the time the script read, from which the client learns the server's clock.
reply[#reply + 1] = now
return reply
