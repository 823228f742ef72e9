-- ceiling.lua: plain GET of the ceiling server's fixed JSON body.
-- Pays the same client-side costs as the navd scripts (response() callback,
-- pre-built request string) so that navd/ceiling ratios compare servers only,
-- and sends the bytes get.lua sends navd: a session path and an Authorization
-- header with a token of the same length (the ceiling ignores it, but its MHD
-- reads and parses it as navd's does).
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")

local request_text

function init(args)
   request_text = wrk.format("GET", "/v1/sessions/3f2a9c1e5b7d4e6f8a0b1c2d3e4f5a6b",
      {["Authorization"] = "Bearer " .. string.rep("5c", 32)})
end

function request()
   return request_text
end
