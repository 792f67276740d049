--- MCP servers: `:WaveMcp` shows the project's servers (`wave/mcp/list`) in a floating
--- window: name, status, scope, transport, error, tools. A project server waiting for
--- approval is approved or denied there (`a` / `d` on its lines) or with
--- `:WaveMcp approve <name>` / `:WaveMcp deny <name>` (`wave/mcp/approve`). The window
--- follows the `mcpStatus` updates. A server that waits for approval, or fails, is said once
--- per Neovim with `vim.notify`. `:checkhealth wave` lists them too (`wave.health`).
local client = require("wave.client")

local M = {}

M.APPROVE = "wave/mcp/approve"
M.LIST = "wave/mcp/list"

M.icons = {
  connected = "●",
  starting = "◐",
  failed = "✗",
  ["needs-approval"] = "?",
  disabled = "⊘",
  stopped = "○",
}
local status_hl = {
  connected = "WaveToolDone",
  starting = "WaveToolRunning",
  failed = "WaveToolFailed",
  ["needs-approval"] = "WaveTrust",
  disabled = "WaveNotice",
  stopped = "WaveNotice",
}
local STATUS_TEXT = {
  ["needs-approval"] = "needs approval",
  stopped = "not running (starts with a session)",
}

---@type table<string, string[]> server names last listed, by project root (completion)
M.names = {}
---@type {buf: integer, win: integer, root: string, servers: table[], at: table<integer, string>}?
local view = nil
---@type table<string, boolean> what was already said with vim.notify
local said = {}

local function notify(message, level)
  vim.notify("wave: " .. message, level or vim.log.levels.INFO)
end

--- `echo` for `mcp__srv__echo` (the server name with Claude Code's character rule).
function M.tool_name(server, full)
  local prefix = "mcp__" .. server:gsub("[^%w_-]", "_") .. "__"
  if vim.startswith(full, prefix) then
    return full:sub(#prefix + 1)
  end
  return full
end

--- A held back server: disabled because the folder is not trusted.
function M.held_back(server)
  return server.status == "disabled" and (server.error or ""):lower():find("^held back") ~= nil
end

--- `connected`, `needs approval`, ...
function M.status_text(server)
  return STATUS_TEXT[server.status] or server.status or "?"
end

--- `words` joined with ", " in lines of at most `width` columns, the first starting with
--- `lead`, the others aligned under its first word.
local function wrap(words, width, lead)
  local indent = (" "):rep(vim.fn.strdisplaywidth(lead))
  local lines, line, empty = {}, lead, true
  for i, word in ipairs(words) do
    local piece = word .. (i < #words and "," or "")
    if not empty and #line + 1 + #piece > width then
      table.insert(lines, line)
      line, empty = indent .. piece, false
    else
      line, empty = empty and (line .. piece) or (line .. " " .. piece), false
    end
  end
  if not empty then
    table.insert(lines, line)
  end
  return lines
end

--- The window's lines: a title, then each server (its first line: icon, name, status; then
--- scope, transport and tool count, its error, its tools, how to answer when it waits).
---@return string[] lines
---@return table<integer, string> at the server named on each line (1-based)
---@return table[] marks highlights: {line (0-based), group, from, to (-1: the end)}
function M.lines(root, servers, width)
  width = width or 80
  local lines = { ("MCP servers of %s"):format(vim.fn.fnamemodify(root, ":~")) }
  local at, marks = {}, { { 0, "WaveTitle", 0, -1 } }
  if #servers == 0 then
    table.insert(lines, "")
    table.insert(lines, "No MCP servers: define them in .mcp.json or ~/.wave/settings.json")
    table.insert(lines, "(see :help wave-mcp)")
    return lines, at, marks
  end
  for _, server in ipairs(servers) do
    table.insert(lines, "")
    local name = server.name or "?"
    local first = ("%s %s  %s"):format(M.icons[server.status] or "?", name, M.status_text(server))
    table.insert(lines, first)
    local row = #lines
    at[row] = name
    local hl = status_hl[server.status] or "WaveNotice"
    local icon = #(M.icons[server.status] or "?")
    table.insert(marks, { row - 1, hl, 0, icon })
    table.insert(marks, { row - 1, "WaveToolName", icon + 1, icon + 1 + #name })
    table.insert(marks, { row - 1, hl, icon + 3 + #name, -1 })
    local tools = server.tools or {}
    local about = ("    %s · %s"):format(server.scope or "?", server.transport or "?")
    if #tools > 0 then
      about = about .. (" · %d tool%s"):format(#tools, #tools == 1 and "" or "s")
    end
    table.insert(lines, about)
    at[#lines] = name
    table.insert(marks, { #lines - 1, "WaveToolDetail", 0, -1 })
    if server.error and server.error ~= "" then
      for _, text in ipairs(vim.split(server.error, "\n", { plain = true, trimempty = true })) do
        table.insert(lines, "    " .. text)
        at[#lines] = name
        local group = server.status == "failed" and "WaveError" or "WaveNotice"
        table.insert(marks, { #lines - 1, group, 0, -1 })
      end
    end
    if #tools > 0 then
      local short = vim.tbl_map(function(tool)
        return M.tool_name(name, tool)
      end, tools)
      for _, text in ipairs(wrap(short, width, "    tools: ")) do
        table.insert(lines, text)
        at[#lines] = name
      end
    end
    if server.status == "needs-approval" then
      table.insert(lines, ("    a: approve · d: deny   (:WaveMcp approve %s)"):format(name))
      at[#lines] = name
      table.insert(marks, { #lines - 1, "WaveTrust", 0, -1 })
    elseif M.held_back(server) then
      table.insert(lines, "    :WaveTrust to trust the folder first")
      at[#lines] = name
      table.insert(marks, { #lines - 1, "WaveTrust", 0, -1 })
    end
  end
  table.insert(lines, "")
  table.insert(lines, "a approve · d deny (turn off) · r refresh · q close")
  table.insert(marks, { #lines - 1, "WaveNotice", 0, -1 })
  return lines, at, marks
end

local ns = vim.api.nvim_create_namespace("wave.mcp")

local function usable(win)
  return win and vim.api.nvim_win_is_valid(win)
end

local function paint(servers)
  if not view or not vim.api.nvim_buf_is_valid(view.buf) then
    return
  end
  local width = usable(view.win) and vim.api.nvim_win_get_width(view.win) or 80
  local lines, at, marks = M.lines(view.root, servers, width - 2)
  view.servers, view.at = servers, at
  vim.bo[view.buf].modifiable = true
  vim.api.nvim_buf_set_lines(view.buf, 0, -1, false, lines)
  vim.bo[view.buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(view.buf, ns, 0, -1)
  for _, mark in ipairs(marks) do
    local line, group, from, to = mark[1], mark[2], mark[3], mark[4]
    local text = lines[line + 1] or ""
    pcall(vim.api.nvim_buf_set_extmark, view.buf, ns, line, from, {
      end_col = to < 0 and #text or math.min(to, #text),
      hl_group = group,
    })
  end
  if usable(view.win) then
    local height = math.min(#lines, math.max(5, vim.o.lines - 6))
    pcall(vim.api.nvim_win_set_height, view.win, height)
  end
end

--- `wave/mcp/list` of `root`; `fn(servers)` (nothing on an error: it is said).
function M.list(c, root, fn)
  client.request(c, M.LIST, { cwd = root }, function(result, err)
    if err then
      notify("could not list the MCP servers: " .. err.message, vim.log.levels.ERROR)
      return
    end
    local servers = (result or {}).servers or {}
    M.names[root] = vim.tbl_map(function(server)
      return server.name
    end, servers)
    fn(servers)
  end)
end

local function refresh()
  if not view then
    return
  end
  local c = client.get(view.root)
  if c then
    M.list(c, view.root, paint)
  end
end

--- Keep the answer for server `name` of `root` (`approved`: false turns it off).
function M.answer(root, name, approved)
  client.with_client(root, function(c)
    local params = { cwd = root, name = name, approved = approved }
    client.request(c, M.APPROVE, params, function(result, err)
      if err then
        local verb = approved and "approve" or "deny"
        notify(("could not %s %s: %s"):format(verb, name, err.message), vim.log.levels.ERROR)
        return
      end
      local status = (result or {}).status or "?"
      notify(("MCP server %s: %s"):format(name, M.status_text({ status = status })))
      refresh()
    end)
  end)
end

local function under_cursor()
  if not view then
    return nil
  end
  return view.at[vim.api.nvim_win_get_cursor(0)[1]]
end

local function close()
  if view and usable(view.win) then
    vim.api.nvim_win_close(view.win, true)
  end
  view = nil
end

local function open_window(root)
  close()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "wavemcp"
  pcall(vim.api.nvim_buf_set_name, buf, "wave://mcp")
  local width = math.min(100, math.max(40, vim.o.columns - 8))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = "editor",
    width = width,
    height = 5,
    row = 2,
    col = math.floor((vim.o.columns - width) / 2),
    style = "minimal",
    border = "rounded",
    title = " Wave · MCP servers ",
    title_pos = "center",
  })
  vim.wo[win].wrap = true -- a long error (a path, a traceback line) stays readable
  vim.wo[win].breakindent = true
  vim.wo[win].cursorline = true
  view = { buf = buf, win = win, root = root, servers = {}, at = {} }
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = desc })
  end
  local function answer_here(approved)
    local name = under_cursor()
    if name then
      M.answer(root, name, approved)
    else
      notify("put the cursor on a server")
    end
  end
  map("a", function()
    answer_here(true)
  end, "Wave: approve (turn on) this MCP server")
  map("d", function()
    answer_here(false)
  end, "Wave: deny (turn off) this MCP server")
  map("r", refresh, "Wave: refresh the MCP servers")
  map("q", close, "Wave: close")
  map("<Esc>", close, "Wave: close")
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      if view and view.buf == buf then
        view = nil
      end
    end,
  })
end

--- `:WaveMcp [approve|deny <name>]`
---@param root string
---@param args string[]
function M.command(root, args)
  local action, name = args[1], args[2]
  if action == "approve" or action == "deny" then
    if not name or name == "" then
      notify(("usage: :WaveMcp %s <server>"):format(action), vim.log.levels.ERROR)
      return
    end
    M.answer(root, name, action == "approve")
    return
  end
  if action and action ~= "" then
    local usage = "unknown :WaveMcp argument %q (approve <name>, deny <name>)"
    notify(usage:format(action), vim.log.levels.ERROR)
    return
  end
  client.with_client(root, function(c)
    M.list(c, root, function(servers)
      open_window(root)
      paint(servers)
    end)
  end)
end

--- Completion of `:WaveMcp`: the actions, then the names last listed.
function M.complete(root, line)
  local words = vim.split(line, "%s+", { trimempty = true })
  local done = line:match("%s$") ~= nil
  if #words == 1 or (#words == 2 and not done) then
    return { "approve", "deny" }
  end
  local names = vim.deepcopy(M.names[root] or {})
  table.sort(names)
  return names
end

--- Say once what needs the user: a server waiting for approval, one that failed.
local function heard(root, update)
  local name = update.name or "?"
  if update.status == "needs-approval" then
    local key = root .. "\0" .. name .. "\0approval"
    if not said[key] then
      said[key] = true
      local text = "the project's MCP server %s waits for your approval: :WaveMcp approve %s"
      notify(text:format(name, name) .. " (or :WaveMcp)", vim.log.levels.WARN)
    end
  elseif update.status == "failed" then
    local key = root .. "\0" .. name .. "\0" .. (update.error or "")
    if not said[key] then
      said[key] = true
      local first = vim.split(update.error or "", "\n", { plain = true, trimempty = true })[1]
      local text = ("MCP server %s failed: %s"):format(name, first or "no reason given")
      notify(text, vim.log.levels.WARN)
    end
  end
end

local watching = false
local pending = false

--- Follow the `mcpStatus` updates (idempotent; the client calls it when a server starts).
function M.watch()
  if watching then
    return
  end
  watching = true
  client.subscribe("mcp", function(event)
    if event.type ~= "update" or (event.params or {}).kind ~= "mcpStatus" then
      return
    end
    local c = vim.lsp.get_client_by_id(event.client_id)
    local root = c and c.root_dir
    if not root then
      return
    end
    heard(root, event.params)
    if view and view.root == root and not pending then
      pending = true -- several updates in a row make one list
      vim.defer_fn(function()
        pending = false
        refresh()
      end, 100)
    end
  end)
end

return M
