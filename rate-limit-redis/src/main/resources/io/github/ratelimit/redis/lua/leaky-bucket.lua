-- Leaky bucket, mirroring io.github.ratelimit.core.LeakyBucket: the state is the time (tat, epoch
-- microseconds) at which the queue would be empty, stored as a string. As a meter (no wait allowed)
-- it decides like the token bucket; in delay mode every admitted request waits for its turn.
ALGORITHMS['leaky-bucket'] = {

  acquire = function(key, now, p, cost, max_wait)
    local interval = p.interval
    local tolerance = interval * p.burst
    local tat = tonumber(redis.call('GET', key)) or now
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
    redis.call('SET', key, int(new_tat), 'PX', ttl_ms(used))
    return decision(true, jdiv(tolerance - used, interval), used, 0, turn, 0, gcra_next(used, tolerance, interval))
  end,

  release = gcra_release
}
