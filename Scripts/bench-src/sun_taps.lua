-- wrk script of Scripts/bench sun-serve: each wrk thread sends its own share of the fresh tap
-- URLs in $SUN_TAPS (one path?query a line), each once; past the end it starts over, and the
-- repeats are replays (answered 409, counted by wrk as non-2xx). $SUN_ACCEPT, when set, is the
-- Accept header (text/html for the verdict page a browser gets, issue 51).
local next_id = 0
local accept = os.getenv("SUN_ACCEPT")

function setup(thread)
    thread:set("id", next_id)
    next_id = next_id + 1
end

function init(args)
    local threads = tonumber(os.getenv("SUN_THREADS"))
    taps = {}
    local i = 0
    for line in io.lines(os.getenv("SUN_TAPS")) do
        if i % threads == id then taps[#taps + 1] = line end
        i = i + 1
    end
    position = 0
end

function request()
    position = position + 1
    if position > #taps then position = 1 end
    if accept then return wrk.format("GET", taps[position], {["Accept"] = accept}) end
    return wrk.format("GET", taps[position])
end
