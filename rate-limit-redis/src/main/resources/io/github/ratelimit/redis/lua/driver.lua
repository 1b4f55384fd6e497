-- Decides one or more acquisitions in one atomic call.
-- KEYS: one state key per acquisition.
-- ARGV[1]: the time in epoch microseconds, or '' for the server's TIME (production).
-- ARGV[2]: 'acquire' (all or nothing: when one is rejected the others are given back, in the
--          same way as RateLimitStore#tryAcquireAll) or 'release'.
-- Then per acquisition, 7 values: algorithm, cost, max wait (us), limit, period (us),
--          burst, emission interval (us).
-- Returns 8 integers per acquisition: allowed, remaining, reset (us), retry-after (us), wait (us),
--          nanoseconds to add to retry-after, the time until additional quota (us), and nanoseconds
--          to add to it.
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
  ttl_offset = 3600000
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local op = ARGV[2]

local acquisitions = {}
for i = 1, #KEYS do
  local at = 2 + (i - 1) * 7
  local algorithm = ALGORITHMS[ARGV[at + 1]]
  if not algorithm then
    return redis.error_reply('ERR unknown rate limit algorithm ' .. tostring(ARGV[at + 1]))
  end
  acquisitions[i] = {
    key = KEYS[i],
    algorithm = algorithm,
    cost = tonumber(ARGV[at + 2]),
    max_wait = tonumber(ARGV[at + 3]),
    p = { limit = tonumber(ARGV[at + 4]), period = tonumber(ARGV[at + 5]), burst = tonumber(ARGV[at + 6]),
      interval = tonumber(ARGV[at + 7]) }
  }
end

local decisions = {}
local rejected = false
for i, a in ipairs(acquisitions) do
  if op == 'release' then
    decisions[i] = a.algorithm.release(a.key, now, a.p, a.cost)
  else
    decisions[i] = a.algorithm.acquire(a.key, now, a.p, a.cost, a.max_wait)
    rejected = rejected or decisions[i][1] == 0
  end
end
if rejected then
  for i, a in ipairs(acquisitions) do
    if decisions[i][1] == 1 then
      decisions[i] = a.algorithm.release(a.key, now, a.p, a.cost)
    end
  end
end

-- One acquisition (the common case): its decision is already the reply.
if #decisions == 1 then
  return decisions[1]
end
local reply = {}
for _, d in ipairs(decisions) do
  for _, v in ipairs(d) do
    reply[#reply + 1] = v
  end
end
return reply
