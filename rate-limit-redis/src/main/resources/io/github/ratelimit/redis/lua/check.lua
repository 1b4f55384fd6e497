-- Read-only checks, mirroring io.github.ratelimit.core.LimiterState#check: would `cost` tokens be
-- taken now? Nothing is written. Appended after the prelude and every algorithm, whose readers it
-- shares; a rejection is the algorithm's own (its acquire writes nothing when it rejects).
-- KEYS and ARGV as in driver.lua for one request (ARGV[2], the operation, is 'check'); the same reply.
-- Nothing is taken. A state written under another limit (a plan or a runtime change) is moved and
-- written back as an acquisition would (so its expiry follows the limit in force), and a log drops the
-- entries past its period: the state means the same afterwards.
local CHECKS = {}

-- The buckets (GcraState#check): as the meter decides, on one read of tat.
local function gcra_check(key, now, p, cost)
  local interval = p.interval
  local tolerance = interval * p.burst
  local tat = gcra_read(key, now, p)
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
  local _, count, window_end = fixed_window_read(key, now, p.period)
  local until_end = window_end - now
  if count + cost > p.limit then
    return decision(false, math.max(0, p.limit - count), until_end, until_end, 0, 0, until_end)
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

-- The log (SlidingWindowLog#check): trimmed as an acquisition would, rejected by the acquisition itself
-- (which takes nothing when it rejects).
CHECKS['sliding-window-log'] = function(key, now, p, cost)
  local size = log_expire(key, now, p.period)
  if size + cost > p.limit then
    return ALGORITHMS['sliding-window-log'].acquire(key, now, p, cost, 0)
  end
  local reset, next = 0, 0
  if size > 0 then
    reset = log_expire_at_newest(key, now, p.period, size)
    next = tonumber(redis.call('LINDEX', key, 0)) + p.period - now
  end
  return decision(true, math.max(0, p.limit - size), reset, 0, 0, 0, next)
end

-- Requests in flight: the leases not yet expired, read without dropping the others.
CHECKS['concurrency'] = function(key, now, p, cost)
  local held = redis.call('ZCOUNT', key, '(' .. int(now), '+inf')
  if held + cost > p.limit then
    return decision(false, math.max(0, p.limit - held), 0, CONCURRENCY_RETRY, 0, 0, CONCURRENCY_RETRY)
  end
  return decision(true, math.max(0, p.limit - held), 0, 0, 0, 0, 0)
end

local now = script_now()

-- ARGV[3] (a deadline) does not apply: a late check takes nothing (what it may write means the same).
local reply = {}
for i = 1, #KEYS do
  local at = 4 + (i - 1) * 7
  local check = CHECKS[ARGV[at]]
  if not check then
    return redis.error_reply('ERR unknown rate limit algorithm ' .. tostring(ARGV[at]))
  end
  local p = { limit = tonumber(ARGV[at + 3]), period = tonumber(ARGV[at + 4]), burst = tonumber(ARGV[at + 5]),
    interval = tonumber(ARGV[at + 6]), lease = ARGV[at + 6] }
  for _, v in ipairs(check(KEYS[i], now, p, tonumber(ARGV[at + 1]))) do
    reply[#reply + 1] = v
  end
end
-- Then the time the script read, from which the client learns the server's clock.
reply[#reply + 1] = now
return reply
