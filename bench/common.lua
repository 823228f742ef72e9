-- common.lua: shared by the wrk scripts in bench/ (loaded with dofile).
--
-- * counts responses whose status is not 2xx, per wrk thread, and done()
--   adds them up over the threads;
-- * done() prints one parseable line:
--   RESULT requests=… duration_s=… rps=… p50_us=… p90_us=… p99_us=… p999_us=…
--          max_us=… mean_us=… non2xx=… errors_connect=… errors_read=…
--          errors_write=… errors_timeout=… errors_status=…
--   and, when some answer was not 2xx, "NON2XX_SAMPLE <status> <body…>";
-- * load_sessions() reads the "id token" lines bench/sessions.py writes;
-- * alternate() drives mutations that alternate per session (see below);
-- * with PACE_MS set, every connection waits before each request (wrk's
--   delay()), on average PACE_MS milliseconds: 256 connections with
--   PACE_MS=25 offer about 10,000 requests/s, an open load below saturation,
--   where latency says how long a request takes rather than how long the
--   queue is. Each wait is drawn from an exponential distribution (seeded, so
--   runs repeat), as the think times of independent clients are: their
--   requests arrive spread out. With PACE_FIXED=1 every wait is exactly
--   PACE_MS; the connections, started together, then stay in step and send
--   their requests in bursts of one per connection, so that run's latency
--   is the time to answer a whole burst (kept to compare with earlier runs).
--
-- wrk runs setup() and done() in its main Lua state and init(), request()
-- and response() in one state per thread, hence the thread:get() in done().

non2xx = 0
first_bad = nil

local pace = tonumber(os.getenv("PACE_MS") or "")
if pace and pace > 0 then
   if os.getenv("PACE_FIXED") == "1" then
      function delay()
         return pace
      end
   else
      math.randomseed(1)
      function delay()
         -- An exponential wait with mean `pace`: 1 - random() is in (0, 1].
         return -pace * math.log(1 - math.random())
      end
   end
end

local threads = {}

function setup(thread)
   table.insert(threads, thread)
end

-- Set by alternate(): called with (status, body) for every response.
local on_response = nil
-- Set by alternate(): makes the next request. request() must exist when the
-- script is loaded (wrk decides then, in its main Lua state, whether requests
-- are dynamic), so it is defined here; get.lua and ceiling.lua replace it.
local make_request = nil

function request()
   return make_request()
end

function response(status, headers, body)
   if status < 200 or status > 299 then
      non2xx = non2xx + 1
      if first_bad == nil then
         first_bad = status .. " " .. string.gsub(string.sub(body or "", 1, 300), "%s+", " ")
      end
   end
   if on_response then
      on_response(status, body)
   end
end

-- The sessions file: the script's first argument (after `--`), else $SESSIONS.
function sessions_file(args)
   local path = (args and args[1]) or os.getenv("SESSIONS")
   if path == nil or path == "" then
      error("pass the sessions file as the script's first argument or in $SESSIONS")
   end
   return path
end

-- {{id=…, token=…}, …} from a file of "id token" lines.
function load_sessions(path)
   local sessions = {}
   local file = assert(io.open(path, "r"))
   for line in file:lines() do
      local id, token = string.match(line, "^(%S+)%s+(%S+)")
      if id then
         table.insert(sessions, {id = id, token = token})
      end
   end
   file:close()
   if #sessions == 0 then
      error("no sessions in " .. path)
   end
   return sessions
end

-- alternate(sessions, first, second): request() and response() for a run
-- that sends, to each session in turn, first(session), then second(session),
-- then first(session) again, and so on (each returns a request string).
--
-- A session is never sent a request while its previous one is unanswered:
-- request() skips sessions in flight, and response() takes the session id
-- (32 hex digits, the first such string in the body: the session view's
-- "id") out of the answer to free the session, flipping its turn only on a
-- 2xx. So requests of one session cannot overtake each other even when one
-- connection stalls while the others go on (as on a busy machine), which
-- would otherwise send `news` to a session still on /top/list_news.
function alternate(sessions, first, second)
   local count = #sessions
   local firsts, seconds, by_id = {}, {}, {}
   local busy, turn = {}, {}
   for index, s in ipairs(sessions) do
      firsts[index] = first(s)
      seconds[index] = second(s)
      by_id[s.id] = index
      turn[index] = 0
   end
   local cursor = 0
   make_request = function()
      for _ = 1, count do
         cursor = cursor % count + 1
         if not busy[cursor] then
            busy[cursor] = true
            if turn[cursor] == 0 then
               return firsts[cursor]
            end
            return seconds[cursor]
         end
      end
      error("every session has a request in flight: use more sessions than connections")
   end
   on_response = function(status, body)
      -- The session view's first "id" member is the session's (its keys are sorted:
      -- context, events, graph, id, …; events have no "id"). A plain find, not a
      -- pattern: matching a pattern over a 3 KB answer cost wrk as much CPU as navd
      -- spent answering it, and wrk shares the machine with the server.
      local at = body and string.find(body, '"id":"', 1, true)
      local id = at and string.sub(body, at + 6, at + 37)
      local index = id and by_id[id]
      if index then
         busy[index] = nil
         if status >= 200 and status <= 299 then
            turn[index] = 1 - turn[index]
         end
      end
   end
end

function done(summary, latency, requests)
   local bad = 0
   local sample = nil
   for _, thread in ipairs(threads) do
      bad = bad + (tonumber(thread:get("non2xx")) or 0)
      sample = sample or thread:get("first_bad")
   end
   local seconds = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      "RESULT requests=%d duration_s=%.3f rps=%.1f p50_us=%d p90_us=%d p99_us=%d p999_us=%d max_us=%d mean_us=%.1f "
         .. "non2xx=%d errors_connect=%d errors_read=%d errors_write=%d errors_timeout=%d errors_status=%d\n",
      summary.requests, seconds, summary.requests / seconds,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
      latency.max, latency.mean,
      bad, e.connect, e.read, e.write, e.timeout, e.status))
   if sample then
      io.write("NON2XX_SAMPLE " .. sample .. "\n")
   end
end
