-- wrk script: POST /api/login with a junk username and password per request (a new Redis key each).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"

local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

function init(args)
  math.randomseed(os.time() + tid * 7919)
end

function request()
  local user = "junk" .. tid .. "-" .. math.random(1, 1000000000)
  local body = "username=" .. user .. "&password=x" .. math.random(1, 1000000)
  return wrk.format("POST", "/api/login", nil, body)
end
