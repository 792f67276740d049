-- MCP servers: the user's `srv` connects, the user's `bad` fails, the project's `proj`
-- (.mcp.json) waits for approval. Each need is said once with vim.notify; :WaveMcp shows
-- them in a floating window (status, scope, transport, error, tools) that follows the
-- updates; `a` on proj's line approves it and it connects; the model then calls its tool;
-- :WaveMcp deny turns it off; :checkhealth lists them; completion offers the actions and
-- the names.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

local notes = {}
vim.notify = function(message, level)
  table.insert(notes, { message = message, level = level })
end
local function noted(text)
  for _, note in ipairs(notes) do
    if note.message:find(text, 1, true) then
      return note
    end
  end
end

local function report()
  vim.cmd("checkhealth wave")
  local text = H.text(vim.api.nvim_get_current_buf())
  vim.cmd("bwipeout!")
  return text
end

vim.cmd("WaveChat")
local chat = H.chat()
local function mcp_buf()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(buf) == "wave://mcp" then
      return buf
    end
  end
end
local function shown()
  local buf = mcp_buf()
  return buf and H.text(buf) or ""
end
H.extra_context = function()
  return "mcp window:\n" .. shown() .. "\nnotes: " .. vim.inspect(notes)
end
local function turn(text)
  chat:send(text)
  H.wait("the turn to end", function()
    return chat.session_id and not chat.turn_running and not chat.request_id
  end, 30000)
end

turn("hello")
H.wait("the approval note", function()
  return noted("the project's MCP server proj waits for your approval: :WaveMcp approve proj")
end, 30000)
H.eq(vim.log.levels.WARN, noted("waits for your approval").level, "a warning")
H.wait("the failure note", function()
  return noted("MCP server bad failed: ")
end, 30000)

vim.cmd("WaveMcp")
H.wait("the window", mcp_buf)
local win = vim.api.nvim_get_current_win()
H.eq("editor", vim.api.nvim_win_get_config(win).relative, "a floating window")
H.eq(mcp_buf(), vim.api.nvim_get_current_buf(), "it has the focus")
H.wait("srv connected with its tools", function()
  return shown():find("● srv  connected", 1, true) and shown():find("tools: echo, peek", 1, true)
end, 30000)
local text = shown()
H.contains(text, "MCP servers of " .. vim.fn.fnamemodify(vim.fn.getcwd(), ":~"), "title")
H.contains(text, "    user · stdio · 10 tools", "scope, transport, tool count")
H.truthy(text:find("\n           picture", 1, true), "tools wrap under the first one")
H.contains(text, "? proj  needs approval", "proj waits")
H.contains(text, "    project · stdio", "proj's scope")
H.contains(text, "a: approve · d: deny   (:WaveMcp approve proj)", "how to answer")
H.contains(text, "✗ bad  failed", "bad failed")

local health = report()
H.contains(health, "MCP servers", "health section")
H.contains(health, "srv: connected (user, stdio, 10 tools)", "health: srv")
H.truthy(health:find("WARNING[^\n]*proj: needs approval %(project, stdio%)"), "health: proj warns")
H.contains(health, ":WaveMcp approve proj to start it", "health: advice")
H.truthy(health:find("WARNING[^\n]*bad: failed %(user, stdio%): "), "health: bad warns, with why")

H.eq({ "approve", "deny" }, vim.fn.getcompletion("WaveMcp ", "cmdline"), "completion: actions")
H.eq({ "bad", "proj", "srv" }, vim.fn.getcompletion("WaveMcp approve ", "cmdline"), "names")

-- `a` on one of proj's lines approves it; the window follows it to connected.
vim.api.nvim_set_current_win(win)
local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
local at
for i, line in ipairs(lines) do
  if line:find("project · stdio", 1, true) then
    at = i
  end
end
vim.api.nvim_win_set_cursor(win, { H.truthy(at, "proj's line"), 0 })
vim.cmd("normal a")
H.wait("proj connected", function()
  return shown():find("● proj  connected", 1, true)
end, 30000)
H.truthy(noted("MCP server proj: "), "the answer is said")

vim.cmd("normal q")
H.eq(nil, mcp_buf(), "q closes the window")
turn("peek with proj")

vim.cmd("WaveMcp deny proj")
H.wait("proj's answer", function()
  return noted("MCP server proj: disabled")
end)
vim.cmd("WaveMcp")
H.wait("proj disabled", function()
  return shown():find("⊘ proj  disabled", 1, true)
end)
H.contains(shown(), "turned off by the user", "why")
H.done()
