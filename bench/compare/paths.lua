-- wrk script: requests taken in turn from a file of "path<TAB>token" lines (token optional).
-- Each thread takes its own slice of the file; with once=1, a thread stops at the end
-- of its slice, so every request of a cold run asks for an entity no request asked for.
-- done() prints one JSON line that bench/compare/wrk.py reads.

local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  local file, count, once = args[1], tonumber(args[2]), args[3] == "1"
  local all = {}
  for line in io.lines(file) do
    table.insert(all, line)
  end
  requests_list = {}
  for i = id + 1, #all, count do
    local path, token = all[i]:match("^([^\t]+)\t?(.*)$")
    local headers = { ["X-Forwarded-Proto"] = "https" }
    if token ~= "" then
      headers["Authorization"] = "Token " .. token
    end
    table.insert(requests_list, wrk.format("GET", path, headers))
  end
  position = 0
  stop_after = once
  statuses = {}
end

function request()
  position = position + 1
  if position > #requests_list then
    if stop_after then
      wrk.thread:stop()
    end
    position = 1
  end
  return requests_list[position]
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local codes = {}
  for _, thread in ipairs(threads) do
    local got = thread:get("statuses")
    for status, n in pairs(got) do
      codes[#codes + 1] = string.format("[%d, %d]", status, n)
    end
  end
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "bytes": %d, "errors": {"connect": %d, "read": %d, '
      .. '"write": %d, "status": %d, "timeout": %d}, "p50_us": %d, "p90_us": %d, "p99_us": %d, '
      .. '"mean_us": %.1f, "statuses": [%s]}\n',
    summary.requests, summary.duration, summary.bytes, summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean,
    table.concat(codes, ", ")))
end
