--- `wave/permission/request`: ask the user with `vim.ui.select` (Allow, Allow for this
--- session, Deny), the call's diff (or command) shown in a floating window meanwhile.
local M = {}

M.choices = { "Allow", "Allow for this session", "Deny" }

local ANSWERS = {
  ["Allow"] = { allowed = true },
  ["Allow for this session"] = { allowed = true, remember = "session" },
}

--- The text to preview and its filetype: the diff of a Write/Edit, a Bash command.
---@return string[]? lines, string? filetype, string? title
function M.preview_of(params)
  local preview = params.preview
  if type(preview) == "table" and type(preview.diff) == "string" and preview.diff ~= "" then
    local lines = vim.split(preview.diff:gsub("\n$", ""), "\n", { plain = true })
    return lines, "diff", vim.fn.fnamemodify(preview.path or "", ":~:.")
  end
  local args = params.arguments or {}
  if params.toolName == "Bash" and type(args.command) == "string" then
    return vim.split(args.command, "\n", { plain = true }), "sh", "Bash"
  end
end

--- Show `lines` in a floating window in the middle of the editor; returns its window.
---@return integer win
function M.open_preview(lines, filetype, title)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = filetype
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].modifiable = false
  local width = 20
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  width = math.min(width + 2, math.floor(vim.o.columns * 0.8))
  local height = math.max(1, math.min(#lines, math.floor(vim.o.lines * 0.6)))
  return vim.api.nvim_open_win(buf, false, {
    relative = "editor",
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 2),
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    title = " " .. (title or "Wave") .. " ",
    title_pos = "center",
    zindex = 60,
  })
end

-- One prompt at a time: parallel subagents may ask together.
local busy = false
local queue = {}

local function acquire()
  if not busy then
    busy = true
    return
  end
  local co = coroutine.running()
  table.insert(queue, co)
  coroutine.yield()
end

local function release()
  local next_co = table.remove(queue, 1)
  if next_co then
    vim.schedule(function()
      coroutine.resume(next_co)
    end)
  else
    busy = false
  end
end

--- Choose with `vim.ui.select` from inside the request's coroutine (Neovim runs server
--- requests in one and sends the handler's return value as the answer).
local function select(items, opts)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return nil
  end
  vim.ui.select(items, opts, function(choice)
    -- Resume after the yield, also when the select answered synchronously.
    vim.schedule(function()
      coroutine.resume(co, choice)
    end)
  end)
  return coroutine.yield()
end

--- The handler: returns `{allowed, message?, remember?}`.
---@param params table {sessionId, toolName, arguments, summary, preview?}
function M.ask(params)
  acquire()
  local win
  local lines, filetype, title = M.preview_of(params)
  if lines then
    win = M.open_preview(lines, filetype, title)
  end
  local ok, choice = pcall(select, M.choices, {
    prompt = "Wave: allow " .. (params.summary or params.toolName or "this tool call") .. "?",
    kind = "wave_permission",
  })
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
  release()
  if not ok then
    choice = nil
  end
  local answer = ANSWERS[choice] or { allowed = false }
  local chat = require("wave.chat").of_session(params.sessionId or "")
  if chat then
    local verdict = answer.remember and "Allowed for this session"
      or (answer.allowed and "Allowed" or "Denied")
    chat.transcript:notice(("%s: %s"):format(verdict, params.summary or params.toolName or ""))
  end
  return answer
end

return M
