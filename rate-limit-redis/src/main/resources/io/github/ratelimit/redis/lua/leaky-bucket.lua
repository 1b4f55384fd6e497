-- Leaky bucket, mirroring io.github.ratelimit.core.LeakyBucket: the state is the time (tat, epoch
-- microseconds) at which the queue would be empty, stored with the emission interval (gcra_read). As a meter (no wait allowed)
-- it decides like the token bucket; in delay mode every admitted request waits for its turn.
ALGORITHMS['leaky-bucket'] = {

  acquire = function(key, now, p, cost, max_wait)
    local interval = p.interval
    local tolerance = interval * p.burst
    local tat = gcra_read(key, now, p)
    local base = math.max(tat, now)
    local new_tat = base + cost * interval
    local used = new_tat - now
    local turn = 0
    if max_wait > 0 then
      turn = base - now
    end
    if used > tolerance or turn > max_wait then
      local available = jdiv(tolerance - (base - now), interval)
      local late = 0
      if max_wait > 0 then
        late = turn - max_wait
      end
      local retry = math.max(used - tolerance, late)
      return decision(false, math.max(0, available), base - now, retry, 0, 0,
        math.min(gcra_next(base - now, tolerance, interval), math.max(1, retry)))
    end
    gcra_write(key, now, p, new_tat)
    return decision(true, jdiv(tolerance - used, interval), used, 0, turn, 0, gcra_next(used, tolerance, interval))
  end,

  -- The same decision as acquire, as one integer (see token-bucket.lua): 2 * used when allowed,
  -- 2 * (base - now) + 1 when rejected.
  compact = function(key, now, p, cost, max_wait)
    local interval = p.interval
    local tat = gcra_read(key, now, p)
    local base = math.max(tat, now)
    local new_tat = base + cost * interval
    if new_tat - now > interval * p.burst or (max_wait > 0 and base - now > max_wait) then
      return 2 * (base - now) + 1
    end
    gcra_write(key, now, p, new_tat)
    return 2 * (new_tat - now)
  end,

  release = gcra_release
}
