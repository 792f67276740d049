-- wave.nvim: commands and autocommands only; everything else is required on first use.
if vim.g.loaded_wave then
  return
end
vim.g.loaded_wave = true

if vim.fn.has("nvim-0.10") == 0 then
  vim.notify("wave.nvim needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  return
end

local function wave()
  return require("wave")
end

local command = vim.api.nvim_create_user_command

command("WaveChat", function(args)
  wave().open_chat(args.args, args.bang)
end, {
  nargs = "*",
  bang = true,
  desc = "Open the Wave chat (!: a new conversation) and send the text, if any",
})

command("WaveStop", function()
  wave().stop()
end, { desc = "Stop the running Wave turn" })

command("WaveSessions", function()
  wave().sessions()
end, { desc = "Resume a saved Wave session" })

command("WaveMode", function(args)
  wave().mode(args.args)
end, {
  nargs = "?",
  desc = "Set the permission mode of the Wave session",
  complete = function()
    return require("wave.config").permission_modes
  end,
})

command("WaveTasks", function()
  wave().tasks()
end, { desc = "List the session's background tasks (stop one)" })

command("WaveWorktrees", function()
  wave().worktrees()
end, { desc = "List kept worktrees (diff, remove)" })

-- Agent definition files get the server's diagnostics, completion and hover.
vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
  group = vim.api.nvim_create_augroup("wave.agent_files", { clear = true }),
  pattern = { "*/.wave/agents/*.md", "*/.wave/plugins/*/agents/*.md" },
  callback = function(ev)
    if require("wave.config").get().attach_agent_files then
      require("wave.client").attach(ev.buf)
    end
  end,
})

local function highlights()
  local links = {
    WaveTitle = "Title",
    WaveUserHeader = "Title",
    WaveAssistantHeader = "Title",
    WaveBusy = "DiagnosticWarn",
    WaveIdle = "DiagnosticOk",
    WaveNotice = "Comment",
    WaveError = "DiagnosticError",
    WaveToolPending = "Comment",
    WaveToolRunning = "DiagnosticWarn",
    WaveToolDone = "DiagnosticOk",
    WaveToolFailed = "DiagnosticError",
    WaveToolName = "Function",
    WaveToolDetail = "Comment",
    WaveAgentTitle = "Special",
    WaveAgentTask = "Normal",
    WaveAgentActivity = "Comment",
    WaveAgentSummary = "DiagnosticOk",
    WaveAgentResult = "Comment",
    WaveMentionAgent = "Special",
    WaveMentionFile = "Underlined",
  }
  for name, target in pairs(links) do
    vim.api.nvim_set_hl(0, name, { link = target, default = true })
  end
end
highlights()
vim.api.nvim_create_autocmd("ColorScheme", {
  group = vim.api.nvim_create_augroup("wave.highlights", { clear = true }),
  callback = highlights,
})
