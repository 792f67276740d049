--- Pure rendering: transcript items -> lines and highlights (no buffer access here).
---
--- Each function returns `{lines = string[], marks = {row, col, end_col, hl}[]}`, rows
--- relative to the item's first line.
local M = {}

M.icons = { pending = "○", running = "◐", completed = "✓", failed = "✗", stopped = "■" }

local status_hl = {
  pending = "WaveToolPending",
  running = "WaveToolRunning",
  completed = "WaveToolDone",
  failed = "WaveToolFailed",
  stopped = "WaveToolFailed",
}

--- One line of at most `limit` characters.
---@param text string?
---@param limit integer
function M.one_line(text, limit)
  local flat = vim.trim((text or ""):gsub("%s+", " "))
  if vim.fn.strchars(flat) > limit then
    flat = vim.fn.strcharpart(flat, 0, limit - 1) .. "…"
  end
  return flat
end

local function decode(arguments)
  if type(arguments) == "table" then
    return arguments
  end
  local ok, value = pcall(vim.json.decode, arguments or "")
  return ok and type(value) == "table" and value or {}
end

--- What a call works on: `calc.py` for a Read, `pytest -q` for a Bash. The server computes
--- it from the tool's descriptor (the block's `target`); from a server that sends none
--- (older, or a history saved before its tool messages kept it) the first text argument
--- stands in.
---@param block table a `toolBlock` update
function M.target(block)
  if type(block.target) == "string" then
    return M.one_line(block.target, 60)
  end
  local args = decode(block.arguments)
  -- In the order written (a decoded table has none): each `"key":` of the JSON text.
  local text = type(block.arguments) == "string" and block.arguments or ""
  for key in text:gmatch('"([^"\\]+)"%s*:') do
    if type(args[key]) == "string" and vim.trim(args[key]) ~= "" then
      return M.one_line(args[key], 60)
    end
  end
  return ""
end

local function split(text)
  return vim.split(text or "", "\n", { plain = true })
end

---@param message table a user message (`content` may hold mention tags)
function M.user(message)
  local lines = { "## You", "" }
  vim.list_extend(lines, split(message.content))
  table.insert(lines, "")
  return { lines = lines, marks = { { 0, 0, #lines[1], "WaveUserHeader" } } }
end

function M.header()
  return { lines = { "## Wave", "" }, marks = { { 0, 0, 7, "WaveAssistantHeader" } } }
end

---@param text string assistant text (Markdown)
---@param after_tools boolean a blank line first, to part it from the tool lines above
function M.text(text, after_tools)
  local lines = after_tools and { "" } or {}
  vim.list_extend(lines, split(text))
  table.insert(lines, "")
  return { lines = lines, marks = {} }
end

---@param text string
---@param hl string?
function M.notice(text, hl)
  local lines = {}
  for _, line in ipairs(split(text)) do
    table.insert(lines, "> " .. line)
  end
  table.insert(lines, "")
  local marks = {}
  for row = 0, #lines - 2 do
    table.insert(marks, { row, 2, #lines[row + 1], hl or "WaveNotice" })
  end
  return { lines = lines, marks = marks }
end

--- One line for a tool call: `✓ Read calc.py (1-10)`.
---@param block table a `toolBlock` update
function M.tool(block)
  local icon = M.icons[block.status] or M.icons.pending
  local detail = block.shortResult
  if detail == nil or detail == "" then
    detail = M.target(block)
  end
  local prefix = icon .. " " .. block.name
  local line = detail ~= "" and (prefix .. "  " .. M.one_line(detail, 120)) or prefix
  local rule = type(block.details) == "table" and block.details.permission
  if type(rule) == "string" and rule ~= "" then
    line = line .. " · " .. M.one_line(rule, 80) -- the session allowance that let it run
  end
  return {
    lines = { line },
    marks = {
      { 0, 0, #icon, status_hl[block.status] or "WaveToolPending" },
      { 0, #icon + 1, #prefix, "WaveToolName" },
      { 0, #prefix, #line, "WaveToolDetail" },
    },
  }
end

--- What a delegation block's note line says: the turn limit, what its model tier became.
---@param agent table
---@return string[]
function M.agent_notes(agent)
  local notes = {}
  if agent.maxTurnsReached == true then
    table.insert(notes, "hit its turn limit")
  end
  if type(agent.modelNote) == "string" and vim.trim(agent.modelNote) ~= "" then
    table.insert(notes, vim.trim(agent.modelNote))
  end
  return notes
end

--- The block of one delegation: type and title, task, latest activity, then the summary.
--- An agent with a `color` gets a `●` of that colour before its type and a bar (`>`) of
--- that colour on every line.
---@param agent table {status, subagentType, description, prompt, activity, summary, result,
---  error, background, worktree, color, maxTurnsReached, modelNote}
function M.agent(agent)
  local icon = M.icons[agent.status] or M.icons.running
  local color = require("wave.colors").group(agent.color)
  local dot = color and "● " or ""
  local title = agent.subagentType or "Agent"
  local head = "> " .. icon .. " " .. dot .. title
  local description = agent.description and agent.description ~= "" and agent.description or nil
  local first = head .. (description and (" · " .. M.one_line(description, 80)) or "")
  if agent.background then
    first = first .. " (background)"
  end
  local lines = { first }
  local title_at = 2 + #icon + 1
  local marks = {
    { 0, 2, 2 + #icon, status_hl[agent.status] or "WaveToolRunning" },
    { 0, title_at + #dot, #first, "WaveAgentTitle" },
  }
  if color then
    table.insert(marks, { 0, title_at, title_at + #dot - 1, color })
  end
  local function add(text, hl)
    local line = "> " .. text
    table.insert(lines, line)
    table.insert(marks, { #lines - 1, 2, #line, hl })
  end
  if agent.prompt and agent.prompt ~= "" then
    add("Task: " .. M.one_line(agent.prompt, 160), "WaveAgentTask")
  end
  if agent.summary and agent.summary ~= "" then
    add(agent.summary, "WaveAgentSummary")
  elseif agent.activity and agent.activity ~= "" then
    add(agent.activity, "WaveAgentActivity")
  else
    add("Starting…", "WaveAgentActivity")
  end
  local notes = M.agent_notes(agent)
  if #notes > 0 then
    add(table.concat(notes, " · "), "WaveAgentNote")
  end
  if agent.error and agent.error ~= vim.NIL and agent.error ~= "" then
    add("Error: " .. M.one_line(agent.error, 160), "WaveToolFailed")
  end
  if agent.worktree and agent.worktree ~= "" then
    add("Worktree: " .. M.one_line(agent.worktree, 160), "WaveAgentActivity")
  end
  if agent.result and agent.result ~= "" then
    local shown = 0
    for _, line in ipairs(split(agent.result)) do
      if vim.trim(line) ~= "" and shown < 3 then
        add("↳ " .. M.one_line(line, 160), "WaveAgentResult")
        shown = shown + 1
      end
    end
  end
  if color then
    for row = 0, #lines - 1 do
      table.insert(marks, { row, 0, 1, color })
    end
  end
  table.insert(lines, "")
  return { lines = lines, marks = marks }
end

--- `12,345` for 12345.
---@param n number
function M.thousands(n)
  local text = tostring(math.floor(n))
  local out = text:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (out:gsub("^,", ""))
end

--- `950`, `12.3k`, `32k`, `128k`: a token count in a few characters.
---@param n number
function M.short_count(n)
  if n < 1000 then
    return tostring(math.floor(n))
  end
  local k = n / 1000
  local text = k >= 100 and ("%d"):format(math.floor(k + 0.5)) or ("%.1f"):format(k)
  return (text:gsub("%.0$", "")) .. "k"
end

--- `ctx 12.3k/32k 38%`: how full the model's context window is.
---@param tokens number
---@param window number
function M.context_usage(tokens, window)
  local percent = window > 0 and math.floor(tokens * 100 / window + 0.5) or 0
  return ("ctx %s/%s %d%%"):format(M.short_count(tokens), M.short_count(window), percent)
end

--- `3 min ago` for an epoch-milliseconds time.
---@param ms number
---@param now_ms number?
function M.ago(ms, now_ms)
  local seconds = math.max(0, math.floor(((now_ms or os.time() * 1000) - ms) / 1000))
  if seconds < 60 then
    return "just now"
  elseif seconds < 3600 then
    return ("%d min ago"):format(seconds / 60)
  elseif seconds < 86400 then
    return ("%d h ago"):format(seconds / 3600)
  end
  return os.date("%Y-%m-%d", math.floor(ms / 1000)) --[[@as string]]
end

return M
