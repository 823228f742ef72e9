-- transitions.lua: POST /v1/sessions/{id}/transitions, rotating over the
-- sessions in the sessions file (first script argument) and alternating per
-- session between the `news` link of the top scene and the graph-wide `top`
-- link; on Examples/news.json that moves between /top and
-- /top/list_news(category=1):
--   {"name":"news","params":{"category":1}}  then  {"name":"top"}
-- `news` exists only on /top, so the sessions must start there: bench/run.sh
-- creates a fresh set for every run. See alternate() in common.lua.
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")

local function post(s, body)
   return wrk.format("POST", "/v1/sessions/" .. s.id .. "/transitions",
      {["Authorization"] = "Bearer " .. s.token, ["Content-Type"] = "application/json"}, body)
end

function init(args)
   alternate(load_sessions(sessions_file(args)),
      function(s) return post(s, '{"name":"news","params":{"category":1}}') end,
      function(s) return post(s, '{"name":"top"}') end)
end
