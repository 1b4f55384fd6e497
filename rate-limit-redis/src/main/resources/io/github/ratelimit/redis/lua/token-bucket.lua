-- Token bucket as GCRA, mirroring io.github.ratelimit.core.TokenBucket: the whole state is the
-- theoretical arrival time (tat, epoch microseconds) at which the bucket is full again, stored with
-- the emission interval (gcra_read). A missing key is a full bucket; the key expires when its tat passes.
ALGORITHMS['token-bucket'] = {

  acquire = function(key, now, p, cost, max_wait)
    local interval = p.interval
    local tolerance = interval * p.burst
    local tat = gcra_read(key, now, p)
    local base = math.max(tat, now)
    local new_tat = base + cost * interval
    local used = new_tat - now
    local wait = used - tolerance
    if wait > max_wait then
      local available = jdiv(tolerance - (base - now), interval)
      return decision(false, math.max(0, available), base - now, wait, 0, 0,
        math.min(gcra_next(base - now, tolerance, interval), wait))
    end
    gcra_write(key, now, p, new_tat)
    if wait <= 0 then
      return decision(true, jdiv(tolerance - used, interval), used, 0, 0, 0, gcra_next(used, tolerance, interval))
    end
    -- Reserved ahead (delay mode): the request proceeds once its tokens have refilled.
    return decision(true, 0, used, 0, wait, 0, gcra_next(used, tolerance, interval))
  end,

  -- The same decision as acquire, as one integer (a compact reply, in batches of driver.lua; a
  -- request alone is decided the same way by lone-bucket.lua): 2 * used when
  -- allowed (used = tat' - now), 2 * (base - now) + 1 when rejected. The client derives remaining,
  -- reset, retry-after, wait and next from it as acquire does (RedisRateLimitStore#compactDecision).
  compact = function(key, now, p, cost, max_wait)
    local interval = p.interval
    local tat = gcra_read(key, now, p)
    local base = math.max(tat, now)
    local new_tat = base + cost * interval
    if new_tat - now - interval * p.burst > max_wait then
      return 2 * (base - now) + 1
    end
    gcra_write(key, now, p, new_tat)
    return 2 * (new_tat - now)
  end,

  release = gcra_release
}
