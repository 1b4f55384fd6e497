-- Token bucket as GCRA, mirroring io.github.ratelimit.core.TokenBucket: the whole state is the
-- theoretical arrival time (tat, epoch microseconds) at which the bucket is full again, stored as a
-- string. A missing key is a full bucket; the key expires when its tat passes.
ALGORITHMS['token-bucket'] = {

  acquire = function(key, now, p, cost, max_wait)
    local interval = p.interval
    local tolerance = interval * p.burst
    local tat = tonumber(redis.call('GET', key)) or now
    local base = math.max(tat, now)
    local new_tat = base + cost * interval
    local used = new_tat - now
    local wait = used - tolerance
    if wait > max_wait then
      local available = jdiv(tolerance - (base - now), interval)
      return decision(false, math.max(0, available), base - now, wait, 0, 0,
        math.min(gcra_next(base - now, tolerance, interval), wait))
    end
    redis.call('SET', key, int(new_tat), 'PX', ttl_ms(used))
    if wait <= 0 then
      return decision(true, jdiv(tolerance - used, interval), used, 0, 0, 0, gcra_next(used, tolerance, interval))
    end
    -- Reserved ahead (delay mode): the request proceeds once its tokens have refilled.
    return decision(true, 0, used, 0, wait, 0, gcra_next(used, tolerance, interval))
  end,

  release = gcra_release
}
