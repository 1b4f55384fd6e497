-- Refreshes the leases of concurrency limits (see concurrency.lua) an instance holds, in one call.
-- KEYS: the lease sets (one hash slot). ARGV[1]: the time in epoch microseconds, or '' for the server's
-- TIME (production). ARGV[2]: the lease expiry (us). Then per key: the number n of leases, and n pairs
-- (lease id, cost). Only a lease still there gets its new expiry (ZADD XX): one that expired and was
-- dropped is never brought back, since another request may hold its slot now. Returns the slots
-- refreshed, then the time the script read.
local now
local ttl_offset = 0
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
  ttl_offset = 3600000
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local expiry = now + tonumber(ARGV[2])
local refreshed = 0
local at = 3
for i = 1, #KEYS do
  local n = tonumber(ARGV[at])
  at = at + 1
  for _ = 1, n do
    local id = ARGV[at]
    local cost = tonumber(ARGV[at + 1])
    at = at + 2
    for j = 1, cost do
      local member = id
      if j > 1 then
        member = id .. '/' .. j
      end
      refreshed = refreshed + redis.call('ZADD', KEYS[i], 'XX', 'CH', expiry, member)
    end
  end
  local last = redis.call('ZRANGE', KEYS[i], -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIRE', KEYS[i], math.ceil((tonumber(last[2]) - now) / 1000) + 1 + ttl_offset)
  end
end
return { refreshed, now }
