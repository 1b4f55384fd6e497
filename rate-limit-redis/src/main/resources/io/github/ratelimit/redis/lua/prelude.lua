-- Shared by every rate limit script. Times and durations are integer microseconds held in Lua
-- doubles: exact up to 2^53 (about 285 years of microseconds), so an epoch timestamp (~1.8e15)
-- plus the longest budget a Limit allows (100 years, ~3.2e15) stays exact.
-- Effects replication, which lets a script read TIME before writing, is the default since Redis 5
-- and the only mode since 7 (which added REDIS_VERSION_NUM); ask for it only on older servers.
if redis.replicate_commands and not redis.REDIS_VERSION_NUM then
  pcall(redis.replicate_commands)
end

local ALGORITHMS = {}

-- Integer division truncating toward zero, like Java's long division, corrected for any
-- rounding of the floating-point quotient.
local function jdiv(a, b)
  if a >= 0 and b > 0 then
    -- The common case: no signs to handle.
    local q = math.floor(a / b)
    if q * b > a then
      return q - 1
    elseif (q + 1) * b <= a then
      return q + 1
    end
    return q
  end
  local negative = (a < 0) ~= (b < 0)
  a = math.abs(a)
  b = math.abs(b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  if negative then
    return -q
  end
  return q
end

-- Java's Math.floorDiv for a non-negative divisor.
local function floordiv(a, b)
  local q = jdiv(a, b)
  if q * b ~= a and a < 0 then
    q = q - 1
  end
  return q
end

-- Writes a number as an exact integer string (tostring would use exponent notation).
local function int(x)
  return string.format('%.0f', x)
end

-- Set by script_now when a test passes its own time: keys then live an hour longer, so that
-- Redis, which expires keys by its real clock, does not expire them while the test's clock stands
-- still (the test subtracts the hour and expires keys itself, in test time).
local ttl_offset = 0

-- The time of the call, epoch microseconds: ARGV[1] when a test passes its own (its keys then live an
-- hour longer, above), else the server's TIME (production, ARGV[1] = '').
local function script_now()
  if ARGV[1] ~= '' then
    ttl_offset = 3600000
    return tonumber(ARGV[1])
  end
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- The key outlives its state: milliseconds rounded up, plus one for the gap between the
-- script's clock read and the clock Redis expires keys by.
local function ttl_ms(micros)
  return math.ceil(micros / 1000) + 1 + ttl_offset
end

-- A decision as the driver returns it: allowed (0/1), remaining, reset, retry-after, wait (all
-- microseconds), nanoseconds to add to retry-after where an algorithm divides below a microsecond,
-- then the time until additional quota is made available (microseconds, and nanoseconds to add).
local function decision(allowed, remaining, reset, retry, wait, retry_ns, next, next_ns)
  return { allowed and 1 or 0, remaining, reset, retry, wait, retry_ns or 0, next or 0, next_ns or 0 }
end

-- floor(1000 * a / b) for a >= 0, b > 0 as (q, f) with the value 1000 * q + f, 0 <= f < 1000: a
-- quotient in nanoseconds of values in microseconds, exact where 1000 * a would not be.
local function floordiv_ns(a, b)
  local q = floordiv(a, b)
  return q, floordiv(1000 * (a - q * b), b)
end

-- The buckets' next token (or drain), as GcraState#untilNext: when tolerance - used reaches the next
-- multiple of the interval; 0 when nothing is spent.
local function gcra_next(used, tolerance, interval)
  if used <= 0 then
    return 0
  end
  local credit = tolerance - used
  local available = math.max(0, floordiv(credit, interval))
  return (available + 1) * interval - credit
end

-- The buckets' state: "<tat> <interval>", the theoretical arrival time and the emission interval it
-- was written with (microseconds). Written with another interval (the key's plan changed, or the
-- policy at run time), it is moved as GcraState#moveTo does: tat' = now + (tat - now) * T' / T
-- (rounded up), so what was spent stays spent; the moved state is written back at once, with the TTL
-- of its new interval. A bare "<tat>" (written before intervals were kept) is of the interval asked.
-- Set by check.lua: a state of another interval (or period) is moved in memory only, not written back.
local read_only = false

-- The state's format: %d (an integer conversion, twice as fast as %.0f) where it is exact, that is where
-- Lua's integer is 64 bits (every 64-bit Redis); else %.0f.
local GCRA_FORMAT = (string.format('%d', 2 ^ 53) == '9007199254740992') and '%d %d' or '%.0f %.0f'

local function gcra_write(key, now, p, tat)
  redis.call('SET', key, string.format(GCRA_FORMAT, tat, p.interval), 'PX', ttl_ms(tat - now))
end

local function gcra_read(key, now, p)
  local state = redis.call('GET', key)
  if not state then
    return now
  end
  -- The common case, a state of the interval asked: its tat is all before " <interval>" (kept in p, so that a
  -- coalesced call builds it once per limit).
  local suffix = p.suffix
  if not suffix then
    suffix = ' ' .. int(p.interval)
    p.suffix = suffix
  end
  if string.sub(state, -#suffix) == suffix then
    local tat = tonumber(string.sub(state, 1, -#suffix - 1))
    if tat then
      return tat
    end
  end
  local tat, interval = string.match(state, '^(%-?%d+) (%d+)$')
  if not tat then
    return tonumber(state) or now
  end
  tat = tonumber(tat)
  interval = tonumber(interval)
  if interval ~= p.interval then
    if tat <= now then
      if not read_only then
        redis.call('DEL', key)
      end
      return now
    end
    local used = tat - now
    local q = floordiv(used, interval)
    local r = used - q * interval
    -- At most the new bucket or 2^61 ns, whichever is more (GcraState#scaled): limits of extreme ratios.
    tat = now + math.min(q * p.interval + math.ceil(r * p.interval / interval),
      math.max(2305843009213693, p.interval * p.burst))
    if not read_only then
      gcra_write(key, now, p, tat)
    end
  end
  return tat
end

-- The buckets' shared release (GcraState): tat moves back by cost * T, never before now.
local function gcra_release(key, now, p, cost)
  local interval = p.interval
  local tat = gcra_read(key, now, p)
  local new_tat = math.max(tat - cost * interval, now)
  if new_tat < tat then
    if new_tat > now then
      gcra_write(key, now, p, new_tat)
    else
      redis.call('DEL', key)
    end
    tat = new_tat
  end
  local used = math.max(0, tat - now)
  local tolerance = interval * p.burst
  return decision(true, math.max(0, jdiv(tolerance - used, interval)), used, 0, 0, 0,
    gcra_next(used, tolerance, interval))
end
