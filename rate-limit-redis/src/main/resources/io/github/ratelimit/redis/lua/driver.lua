-- Decides one or more acquisitions in one atomic call.
-- KEYS: one state key per acquisition.
-- ARGV[1]: the time in epoch microseconds, or '' for the server's TIME (production).
-- ARGV[2]: 'acquire' (all or nothing: when one is rejected the others are given back, in the
--          same way as RateLimitStore#tryAcquireAll), 'acquire-ban' (the same, for acquisitions that may
--          ban their keys: see decide_banning) or 'release'.
-- ARGV[3]: a deadline in the server's time (epoch microseconds), or '' for none: the client gives
--          up then and decides without Redis, so a call that runs later (Redis paused, busy,
--          the command queued) changes nothing and returns { -1, now }.
-- Then per acquisition, 7 values: algorithm, cost, max wait (us), limit, period (us),
--          burst, emission interval (us); for a concurrency limit, the lease expiry (us) as the
--          period and the lease id as the interval (see concurrency.lua).
-- Returns 8 integers per acquisition: allowed, remaining, reset (us), retry-after (us), wait (us),
--          nanoseconds to add to retry-after, the time until additional quota (us), and nanoseconds
--          to add to it; then the time the script read (epoch microseconds), from which the
--          client learns the server's clock. (A request whose one acquisition is of a bucket is
--          sent to lone-bucket.lua instead, whose reply is compact: see token-bucket.lua.)
local now = script_now()
local op = ARGV[2]

-- Reads n acquisitions: keys from KEYS[key_at], their 7 values each from ARGV[arg_at], every `stride`
-- values (7, or 10 with a ban's).
local function read(key_at, arg_at, n, stride)
  local acquisitions = {}
  for i = 1, n do
    local at = arg_at + (i - 1) * (stride or 7)
    local algorithm = ALGORITHMS[ARGV[at]]
    if not algorithm then
      return nil, 'ERR unknown rate limit algorithm ' .. tostring(ARGV[at])
    end
    acquisitions[i] = {
      key = KEYS[key_at + i - 1],
      algorithm = algorithm,
      cost = tonumber(ARGV[at + 1]),
      max_wait = tonumber(ARGV[at + 2]),
      p = { limit = tonumber(ARGV[at + 3]), period = tonumber(ARGV[at + 4]), burst = tonumber(ARGV[at + 5]),
        interval = tonumber(ARGV[at + 6]), lease = ARGV[at + 6] }
    }
  end
  return acquisitions
end

-- A request refused: what its other acquisitions took is given back.
local function release_allowed(acquisitions, decisions)
  for i, a in ipairs(acquisitions) do
    if decisions[i][1] == 1 then
      decisions[i] = a.algorithm.release(a.key, now, a.p, a.cost)
    end
  end
end

-- Decides one request's acquisitions, all or nothing (or releases them).
local function decide(acquisitions, release)
  local decisions = {}
  local rejected = false
  for i, a in ipairs(acquisitions) do
    if release then
      decisions[i] = a.algorithm.release(a.key, now, a.p, a.cost)
    else
      decisions[i] = a.algorithm.acquire(a.key, now, a.p, a.cost, a.max_wait)
      rejected = rejected or decisions[i][1] == 0
    end
  end
  if rejected then
    release_allowed(acquisitions, decisions)
  end
  return decisions
end

-- Several requests that arrived together (coalesced), each all or nothing on its own (a batch whose
-- requests are all one acquisition of the same bucket limit, cost and max wait goes to lone-bucket.lua):
-- ARGV[3]: how many requests; ARGV[4]: the earliest of their deadlines ('' for none), so that the requests'
-- own deadlines are read only when a call runs past it; ARGV[5]: how many distinct limits, then each
-- limit's 5 values (algorithm, limit, period (us), burst, emission interval (us)); then how many distinct
-- acquisitions (shapes), each as 3 values: its limit's index (from 1), cost and max wait (us); then per
-- request its deadline ('' for none), its number n of acquisitions and each acquisition's shape index
-- (from 1); KEYS: all the requests' keys in order. Returns per request: -1 when past its deadline
-- (nothing changed); for one acquisition of an algorithm with a compact reply, that one integer (never
-- negative); else -1 - n and its 8 integers per acquisition. Then the time.
if op == 'batch' then
  local limits = {}
  local arg_at = 6
  for i = 1, tonumber(ARGV[5]) do
    local algorithm = ALGORITHMS[ARGV[arg_at]]
    if not algorithm then
      return redis.error_reply('ERR unknown rate limit algorithm ' .. tostring(ARGV[arg_at]))
    end
    limits[i] = { algorithm = algorithm, p = { limit = tonumber(ARGV[arg_at + 1]), period = tonumber(ARGV[arg_at + 2]),
      burst = tonumber(ARGV[arg_at + 3]), interval = tonumber(ARGV[arg_at + 4]) } }
    arg_at = arg_at + 5
  end
  -- Shapes by their index as the string ARGV holds, so that a request's is found without tonumber.
  local shapes = {}
  local shape_count = tonumber(ARGV[arg_at])
  arg_at = arg_at + 1
  for i = 1, shape_count do
    local l = limits[tonumber(ARGV[arg_at])]
    shapes[tostring(i)] = { algorithm = l.algorithm, compact = l.algorithm.compact, p = l.p,
      cost = tonumber(ARGV[arg_at + 1]), max_wait = tonumber(ARGV[arg_at + 2]) }
    arg_at = arg_at + 3
  end
  local earliest = tonumber(ARGV[4])
  local late = earliest and now > earliest
  local reply = {}
  local r = 0
  local key_at = 1
  for _ = 1, tonumber(ARGV[3]) do
    local count = ARGV[arg_at + 1]
    local n = (count == '1') and 1 or tonumber(count)
    local request_deadline = late and tonumber(ARGV[arg_at])
    arg_at = arg_at + 2
    if request_deadline and now > request_deadline then
      r = r + 1
      reply[r] = -1
    elseif n == 1 then
      -- One acquisition (the common case): decided at once, without the tables of decide.
      local shape = shapes[ARGV[arg_at]]
      local compact = shape.compact
      if compact then
        r = r + 1
        reply[r] = compact(KEYS[key_at], now, shape.p, shape.cost, shape.max_wait)
      else
        local d = shape.algorithm.acquire(KEYS[key_at], now, shape.p, shape.cost, shape.max_wait)
        reply[r + 1] = -2
        for j = 1, 8 do
          reply[r + 1 + j] = d[j]
        end
        r = r + 9
      end
    else
      local acquisitions = {}
      for i = 1, n do
        local shape = shapes[ARGV[arg_at + i - 1]]
        acquisitions[i] = { key = KEYS[key_at + i - 1], algorithm = shape.algorithm, cost = shape.cost,
          max_wait = shape.max_wait, p = shape.p }
      end
      r = r + 1
      reply[r] = -1 - n
      for _, d in ipairs(decide(acquisitions, false)) do
        for j = 1, 8 do
          reply[r + j] = d[j]
        end
        r = r + 8
      end
    end
    key_at = key_at + n
    arg_at = arg_at + n
  end
  reply[r + 1] = now
  return reply
end

-- A ban's decision: rejected, nothing taken, the rest of the ban as retry-after and as the time until
-- more quota; allowed = 2 for a key banned already, 3 for the rejection that has just banned it.
local function banned(limit, rest, flag)
  return { flag, 0, rest, rest, 0, 0, rest, 0 }
end

-- Counts a rejection of a key's budget towards its ban (a hash of the state's slot: first, strikes,
-- until): the after-th within `within` of the first bans the key for `duration`. Returns whether it did.
local function strike(b)
  local held = redis.call('HMGET', b.key, 'first', 'strikes')
  local first = tonumber(held[1])
  local strikes = tonumber(held[2]) or 0
  if not first or now - first >= b.within then
    first = now
    strikes = 0
  end
  strikes = strikes + 1
  if strikes >= b.after then
    redis.call('HSET', b.key, 'first', int(now), 'strikes', 0, 'until', int(now + b.duration))
    redis.call('PEXPIRE', b.key, ttl_ms(math.max(b.duration, b.within)))
    return true
  end
  redis.call('HSET', b.key, 'first', int(first), 'strikes', strikes)
  redis.call('PEXPIRE', b.key, ttl_ms(first + b.within - now))
  return false
end

-- One request whose acquisitions may ban their keys (ARGV[2] = 'acquire-ban'): per acquisition 10 values,
-- the 7 above then its ban's after, within (us) and duration (us), 0 0 0 for one that bans nobody; KEYS:
-- the n state keys, then each one's ban key. A banned key's acquisition is rejected without its budget
-- asked. The budgets are asked in order, all or nothing; the first refusal, when its budget's own, counts
-- towards its key's ban (as CaffeineRateLimitStore does), and may start it; after it, no ban is read nor
-- counted (the in-process store reads the budgets it did not ask).
local function decide_banning(n)
  local acquisitions, err = read(1, 4, n, 10)
  if not acquisitions then
    return nil, err
  end
  local decisions = {}
  local first_refusal = nil
  for i, a in ipairs(acquisitions) do
    local at = 4 + (i - 1) * 10 + 7
    local b = { key = KEYS[n + i], after = tonumber(ARGV[at]), within = tonumber(ARGV[at + 1]),
      duration = tonumber(ARGV[at + 2]) }
    local rest = 0
    if b.after > 0 and not first_refusal then
      rest = (tonumber(redis.call('HGET', b.key, 'until')) or 0) - now
    end
    if rest > 0 then
      decisions[i] = banned(a.p.limit, rest, 2)
    else
      decisions[i] = a.algorithm.acquire(a.key, now, a.p, a.cost, a.max_wait)
    end
    if decisions[i][1] ~= 1 and not first_refusal then
      first_refusal = i
      if rest <= 0 and b.after > 0 and strike(b) then
        decisions[i] = banned(a.p.limit, b.duration, 3)
      end
    end
  end
  if first_refusal then
    release_allowed(acquisitions, decisions)
  end
  return decisions
end

local deadline = tonumber(ARGV[3])
if deadline and now > deadline then
  return { -1, now }
end
local decisions, err
if op == 'acquire-ban' then
  decisions, err = decide_banning(#KEYS / 2)
else
  local acquisitions
  acquisitions, err = read(1, 4, #KEYS)
  decisions = acquisitions and decide(acquisitions, op == 'release')
end
if not decisions then
  return redis.error_reply(err)
end

-- One acquisition (the common case): its decision is already the reply, but for the time.
if #decisions == 1 then
  local reply = decisions[1]
  reply[#reply + 1] = now
  return reply
end
local reply = {}
for _, d in ipairs(decisions) do
  for _, v in ipairs(d) do
    reply[#reply + 1] = v
  end
end
reply[#reply + 1] = now
return reply
