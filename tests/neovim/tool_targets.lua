-- A tool block's line names what the call works on: the `target` the server computed from
-- the tool's descriptor (issue 29), not a table of argument names kept here; a block from a
-- server that sends no target (an older one, a history replayed from messages) shows its
-- first text argument, in the order written.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")
local render = require("wave.render")

-- The renderer alone.
local function line(block)
  return render.tool(vim.tbl_extend("keep", block, { status = "pending", shortResult = "" }))
    .lines[1]
end
H.eq(
  "○ Grep  def answer",
  line({ name = "Grep", arguments = "{}", target = "def answer" }),
  "the target"
)
H.eq(
  "○ mcp__srv__peek  q1",
  line({ name = "mcp__srv__peek", arguments = '{"mode": 3, "query": "q1", "alpha": "a"}' }),
  "no target: the first text argument as written"
)
H.eq(
  "○ Grep",
  line({ name = "Grep", arguments = '{"pattern": "x"}', target = "" }),
  "an empty target is the server's word: nothing to show"
)
H.eq(
  "✓ Read  3 lines",
  line({ name = "Read", target = "a.py", status = "completed", shortResult = "3 lines" }),
  "the short result first"
)

-- With the real server: every line the transcript drew for the calls.
local drawn = {}
local tool = render.tool
render.tool = function(block)
  local out = tool(block)
  table.insert(drawn, out.lines[1])
  return out
end

vim.cmd("WaveChat")
local chat = H.chat()
H.extra_context = function()
  return "lines drawn:\n" .. table.concat(drawn, "\n")
end
chat:send("show the targets")
H.wait("the answer", function()
  return H.text(chat.transcript.buf):find("Targets shown.", 1, true) and not chat.request_id
end)
H.truthy(vim.tbl_contains(drawn, "○ Grep  def answer"), "Grep: its pattern, not its path")
H.truthy(vim.tbl_contains(drawn, "○ TaskOutput  bash-nope"), "TaskOutput: its task id")
H.done()
