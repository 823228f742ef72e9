-- navigate.lua: POST /v1/sessions/{id}/navigate, rotating over the sessions
-- in the sessions file (first script argument) and alternating per session
-- between a deep path and the root, which are three components apart (two
-- pushes, then two pops plus the root's reappearance):
--   {"path":"^/top/list_news(category=1)/show_news(id=2)"}  then  {"path":"^/top"}
-- The sessions must start at /top (the graph's start), which is why
-- bench/run.sh creates a fresh set for every run. See alternate() in common.lua.
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")

local function post(s, body)
   return wrk.format("POST", "/v1/sessions/" .. s.id .. "/navigate",
      {["Authorization"] = "Bearer " .. s.token, ["Content-Type"] = "application/json"}, body)
end

function init(args)
   alternate(load_sessions(sessions_file(args)),
      function(s) return post(s, '{"path":"^/top/list_news(category=1)/show_news(id=2)"}') end,
      function(s) return post(s, '{"path":"^/top"}') end)
end
