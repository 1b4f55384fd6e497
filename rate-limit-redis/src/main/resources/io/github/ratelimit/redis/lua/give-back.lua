-- Give-backs of receipts (RedisRateLimitStore#giveBack, for count: failures), by the same definitions
-- as the in-process store's: what an admitted acquisition still holds, under the limit in force now,
-- found from its receipt's mark (where the cost was taken, epoch microseconds). Nothing of a window that
-- has ended or of entries no longer in the log; no key is created, no state moved to another limit: a
-- give-back never leaves a budget more generous than if the attempt had never been admitted. Appended
-- after the prelude and every algorithm, whose readers and writers it shares (as check.lua is), so that
-- the scripts of acquisitions define nothing more.
-- KEYS: one key per give-back (coalesced give-backs of a lane go together). ARGV as driver.lua's with
-- ARGV[2] = 'giveback' and no deadline (a late give-back gives back only what is still held then); of
-- the 7 values of each, the max wait's place carries the receipt's mark.
-- Returns per give-back what it gave back (tokens; a bucket's microseconds), then the time it read.
local GIVE_BACKS = {}

-- The buckets: held = clamp(mark - now, 0, cost * T), the part of the step (ending at the tat it wrote,
-- the mark) that refill has not restored yet under the receipt's interval T; scaled to the interval the
-- state holds now (a plan or a runtime change since): floor(held * T' / T). tat moves back by held,
-- never before now, and keeps its interval. A missing key is a full bucket.
local function gcra_give_back(key, now, p, cost, mark)
  local state = redis.call('GET', key)
  if not state then
    return 0
  end
  local tat, interval = string.match(state, '^(%-?%d+) (%d+)$')
  if tat then
    tat, interval = tonumber(tat), tonumber(interval)
  else
    tat, interval = tonumber(state), p.interval
    if not tat then
      return 0
    end
  end
  local held = math.min(math.max(mark - now, 0), cost * p.interval)
  if interval ~= p.interval then
    -- In two parts, as the state's move (gcra_read), so that the product stays small where it can.
    local q = floordiv(held, p.interval)
    held = q * interval + floordiv((held - q * p.interval) * interval, p.interval)
  end
  local new_tat = math.max(tat - held, now)
  if new_tat >= tat then
    return 0
  end
  if new_tat > now then
    redis.call('SET', key, string.format(GCRA_FORMAT, new_tat, interval), 'PX', ttl_ms(new_tat - now))
  else
    redis.call('DEL', key)
  end
  return tat - new_tat
end
GIVE_BACKS['token-bucket'] = gcra_give_back
GIVE_BACKS['leaky-bucket'] = gcra_give_back

-- A fixed window: the cost, while the window whose end is the mark lasts (deleted at 0).
GIVE_BACKS['fixed-window'] = function(key, now, p, cost, mark)
  local state = redis.call('GET', key)
  if not state then
    return 0
  end
  local start, count, window_end = string.match(state, '^(%-?%d+) (%d+) ?(%-?%d*)$')
  if not start then
    return 0
  end
  start, count = tonumber(start), tonumber(count)
  window_end = tonumber(window_end) or (start + p.period)
  if window_end ~= mark or now >= window_end then
    return 0
  end
  local given = math.min(cost, count)
  if given > 0 then
    fixed_window_write(key, now, start, count - given, window_end)
  end
  return given
end

-- A log: up to cost entries of the acquisition's timestamp, the mark, that are still in the log (the
-- oldest first, all alike); never the newest entries, which may be another request's. The key keeps its
-- TTL (at most longer than its entries need).
GIVE_BACKS['sliding-window-log'] = function(key, now, p, cost, mark)
  if mark <= now - p.period then
    -- Aged out of the window (under the receipt's period): it holds nothing any more.
    return 0
  end
  return redis.call('LREM', key, cost, int(mark))
end

-- A window counter: after rolling to now (under the period the state holds), the cost from the window
-- whose start is the mark: the current one, or the previous one once it rolled; nothing older.
GIVE_BACKS['sliding-window-counter'] = function(key, now, p, cost, mark)
  local state = redis.call('GET', key)
  if not state then
    return 0
  end
  local saved_start, saved_current, saved_previous, period = string.match(state, '^(%-?%d+) (%d+) (%d+) ?(%d*)$')
  if not saved_start then
    return 0
  end
  period = tonumber(period) or p.period
  local start, current, previous = counter_roll(now, period, tonumber(saved_start), tonumber(saved_current),
    tonumber(saved_previous))
  local given = 0
  if start == mark then
    given = math.min(cost, current)
    current = current - given
  elseif start == mark + period then
    given = math.min(cost, previous)
    previous = previous - given
  end
  if given > 0 then
    counter_write(key, now, period, start, current, previous)
  end
  return given
end

local now = script_now()

local reply = {}
for i = 1, #KEYS do
  local at = 4 + (i - 1) * 7
  -- A concurrency limit's slot comes back with its release, not here.
  local give_back = GIVE_BACKS[ARGV[at]]
  local given = 0
  if give_back then
    local p = { limit = tonumber(ARGV[at + 3]), period = tonumber(ARGV[at + 4]), burst = tonumber(ARGV[at + 5]),
      interval = tonumber(ARGV[at + 6]) }
    given = give_back(KEYS[i], now, p, tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]))
  end
  reply[i] = given
end
reply[#KEYS + 1] = now
return reply
