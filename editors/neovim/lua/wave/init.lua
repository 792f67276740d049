--- wave.nvim: chat with the wave-ls coding agent and its subagents in Neovim.
---
--- `require("wave").setup(opts)` is optional; the commands work with the defaults.
local M = {}

--- Set options (see `:help wave-config`).
---@param opts table?
function M.setup(opts)
  require("wave.config").setup(opts)
  require("wave.commands").register()
end

--- The chat of the current project (made on first use).
---@return wave.Chat
function M.chat()
  return assert(require("wave.chat").current(true))
end

--- `:WaveChat[!] [text]`: open the chat (with `!`, a new conversation); with text, send it.
---@param text string?
---@param new boolean?
function M.open_chat(text, new)
  local chat = M.chat()
  if new and not chat:new_session() then
    return chat
  end
  require("wave.client").with_client(chat.root, function() end) -- start the server early
  chat:open()
  if text and vim.trim(text) ~= "" then
    chat:send(text, function() -- not taken: keep it in the input
      vim.api.nvim_buf_set_lines(chat.input_buf, 0, -1, false, vim.split(text, "\n"))
    end)
  end
  return chat
end

--- `:WaveStop`
function M.stop()
  local chat = require("wave.chat").current(false)
  if chat then
    chat:stop()
  else
    vim.notify("wave: nothing to stop")
  end
end

--- `:WaveSessions`
function M.sessions()
  require("wave.sessions").pick(M.chat())
end

--- `:WaveMode [mode]`: without a mode, pick one.
---@param mode string?
function M.mode(mode)
  local config = require("wave.config")
  local chat = M.chat()
  if mode and mode ~= "" then
    if not vim.tbl_contains(config.permission_modes, mode) then
      vim.notify(
        ("wave: unknown mode %q (%s)"):format(mode, table.concat(config.permission_modes, ", ")),
        vim.log.levels.ERROR
      )
      return
    end
    chat:set_mode(mode)
    return
  end
  vim.ui.select(config.permission_modes, {
    prompt = "Permission mode (now " .. chat.mode .. "):",
    kind = "wave_mode",
  }, function(choice)
    if choice then
      chat:set_mode(choice)
    end
  end)
end

--- `:WaveTasks`
function M.tasks()
  require("wave.tasks").pick(M.chat())
end

--- `:WaveTrust`
function M.trust()
  local buf = vim.api.nvim_get_current_buf()
  local chat = require("wave.chat").of_buffer(buf)
  require("wave.trust").ask(chat and chat.root or require("wave.client").root(buf))
end

--- `:WaveWorktrees`
function M.worktrees()
  require("wave.worktrees").pick(M.chat().root)
end

--- A statusline component: the context window in use by the current project's chat
--- (`ctx 12.3k/32k 38%`, from its session's last `contextUsage`), "" before there is one.
---@return string
function M.statusline()
  local ok, chat = pcall(function()
    return require("wave.chat").current(false)
  end)
  local context = ok and chat and chat.context
  if not context or type(context.tokens) ~= "number" or type(context.window) ~= "number" then
    return ""
  end
  return require("wave.render").context_usage(context.tokens, context.window)
end

--- The project root of the current buffer: its chat's, else the nearest marker's.
function M.project_root()
  local buf = vim.api.nvim_get_current_buf()
  local chat = require("wave.chat").of_buffer(buf)
  return chat and chat.root or require("wave.client").root(buf)
end

--- `:WaveMcp [approve|deny <name>]`
---@param args string[]?
function M.mcp(args)
  require("wave.mcp").command(M.project_root(), args or {})
end

return M
