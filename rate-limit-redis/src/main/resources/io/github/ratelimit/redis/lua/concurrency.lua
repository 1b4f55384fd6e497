-- Concurrency limit, mirroring the Caffeine store's ConcurrencyTable: the requests in flight of a key,
-- as leases in a sorted set: one member per slot (the lease id, then "<id>/2", "<id>/3"... for a cost
-- above 1), scored with the lease's expiry in the script's time (microseconds). A lease that is not
-- refreshed before its expiry counts no more, so an instance that died holds its slots no longer than
-- that. The key expires with its last lease. Of the 7 values of an acquisition, the period carries the
-- lease expiry (us) and the emission interval the lease id (p.lease, as given).
local CONCURRENCY_RETRY = 1000000

local function lease_member(id, i)
  if i == 1 then
    return id
  end
  return id .. '/' .. i
end

-- Drops the leases past their expiry; returns the slots still held.
local function leases_held(key, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  return redis.call('ZCARD', key)
end

-- The key lives as long as its longest lease.
local function leases_ttl(key, now)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIRE', key, ttl_ms(tonumber(last[2]) - now))
  end
end

ALGORITHMS['concurrency'] = {

  acquire = function(key, now, p, cost, max_wait)
    local held = leases_held(key, now)
    if held + cost > p.limit then
      return decision(false, math.max(0, p.limit - held), 0, CONCURRENCY_RETRY, 0, 0, CONCURRENCY_RETRY)
    end
    for i = 1, cost do
      redis.call('ZADD', key, now + p.period, lease_member(p.lease, i))
    end
    leases_ttl(key, now)
    return decision(true, p.limit - held - cost, 0, 0, 0, 0, 0)
  end,

  release = function(key, now, p, cost)
    for i = 1, cost do
      redis.call('ZREM', key, lease_member(p.lease, i))
    end
    local held = leases_held(key, now)
    return decision(true, math.max(0, p.limit - held), 0, 0, 0, 0, 0)
  end
}
