-- One acquisition of a bucket (token bucket or leaky bucket) asked alone: the most common call. It
-- decides as the algorithm's `compact` does (token-bucket.lua, leaky-bucket.lua) with gcra_read and
-- gcra_write of prelude.lua, written out in one piece: a script that defines functions pays for
-- defining them on every call, which inside Redis cost more than the decision itself (docs/redis.md,
-- "A request alone of one bucket"). ScriptAgreementTests holds it to the Java algorithms as it holds
-- the others, and to the driver's path on states of another interval.
-- KEYS and ARGV as driver.lua's for one acquisition with ARGV[2] = 'acquire': the time ('' for the
-- server's), the operation, the deadline ('' for none), then algorithm, cost, max wait (us), limit,
-- period (us), burst, emission interval (us).
-- Returns { compact, now } (see token-bucket.lua), or { -1, now } past the deadline (nothing changed).
-- Several requests of that one shape (coalesced: same limit, cost and max wait, one key each) come as
-- one key each in KEYS, ARGV[3] the earliest of their deadlines and ARGV[10 + i] request i's own ('' for
-- none), read only once the earliest has passed; each is decided on its own, in order, and the reply is
-- per request its compact integer or -1 (past its deadline, nothing changed), then now: the batch reply
-- of driver.lua for requests of one compact acquisition each.
if redis.replicate_commands and not redis.REDIS_VERSION_NUM then
  pcall(redis.replicate_commands)
end
local now
-- A test's own time: keys live an hour longer (see ttl_offset in prelude.lua).
local ttl_offset = 0
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
  ttl_offset = 3600000
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local n = #KEYS
local deadline = tonumber(ARGV[3])
local late = deadline and now > deadline
if late and n == 1 then
  return { -1, now }
end
local leaky = ARGV[4] == 'leaky-bucket'
if not leaky and ARGV[4] ~= 'token-bucket' then
  return redis.error_reply('ERR lone-bucket.lua decides buckets only, not ' .. tostring(ARGV[4]))
end
local cost = tonumber(ARGV[5])
local max_wait = tonumber(ARGV[6])
local burst = tonumber(ARGV[9])
local interval = tonumber(ARGV[10])
local suffix = ' ' .. ARGV[10]

local reply = {}
for i = 1, n do
  local own = late and tonumber(ARGV[10 + i])
  if own and now > own then
    reply[i] = -1
  else
    local key = KEYS[i]
    -- gcra_read: the state "<tat> <interval>"; the interval as the client wrote it is the suffix to find.
    local tat = now
    local state = redis.call('GET', key)
    if state then
      local found
      if string.sub(state, -#suffix) == suffix then
        found = tonumber(string.sub(state, 1, -#suffix - 1))
      end
      if found then
        tat = found
      else
        local old_tat, old_interval = string.match(state, '^(%-?%d+) (%d+)$')
        if not old_tat then
          tat = tonumber(state) or now
        else
          old_tat = tonumber(old_tat)
          old_interval = tonumber(old_interval)
          if old_interval == interval then
            tat = old_tat
          elseif old_tat <= now then
            redis.call('DEL', key)
          else
            -- Written with another interval: moved as GcraState#moveTo, so what was spent stays spent (floordiv
            -- of prelude.lua for a positive dividend and divisor), and written back with its new interval.
            local used = old_tat - now
            local q = math.floor(used / old_interval)
            if q * old_interval > used then
              q = q - 1
            elseif (q + 1) * old_interval <= used then
              q = q + 1
            end
            -- At most the new bucket or 2^61 ns, whichever is more (GcraState#scaled).
            tat = now + math.min(q * interval + math.ceil((used - q * old_interval) * interval / old_interval),
              math.max(2305843009213693, interval * burst))
            redis.call('SET', key, string.format('%.0f %.0f', tat, interval), 'PX',
              math.ceil((tat - now) / 1000) + 1 + ttl_offset)
          end
        end
      end
    end

    -- compact: 2 * used when allowed (used = tat' - now), 2 * (base - now) + 1 when rejected.
    local base = math.max(tat, now)
    local new_tat = base + cost * interval
    local rejected
    if leaky then
      rejected = new_tat - now > interval * burst or (max_wait > 0 and base - now > max_wait)
    else
      rejected = new_tat - now - interval * burst > max_wait
    end
    if rejected then
      reply[i] = 2 * (base - now) + 1
    else
      -- gcra_write, with its TTL (ttl_ms).
      redis.call('SET', key, string.format('%.0f %.0f', new_tat, interval), 'PX',
        math.ceil((new_tat - now) / 1000) + 1 + ttl_offset)
      reply[i] = 2 * (new_tat - now)
    end
  end
end
reply[n + 1] = now
return reply
