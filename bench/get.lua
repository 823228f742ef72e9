-- get.lua: GET /v1/sessions/{id} with the session's Bearer token, rotating
-- over the sessions in the sessions file (first script argument).
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")

local requests_text = {}
local count = 0
local next_index = 0

function init(args)
   for _, s in ipairs(load_sessions(sessions_file(args))) do
      table.insert(requests_text, wrk.format("GET", "/v1/sessions/" .. s.id,
         {["Authorization"] = "Bearer " .. s.token}))
   end
   count = #requests_text
end

function request()
   next_index = next_index % count + 1
   return requests_text[next_index]
end
