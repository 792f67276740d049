--- The user commands, the agent-file autocommand, <Plug> mappings and highlight groups.
--- Registered once, by plugin/wave.lua or by setup() (for plugin managers that put only
--- `lua/` on the runtimepath).
local M = {}

local registered = false

local function wave()
  return require("wave")
end

local function highlights()
  local links = {
    WaveTitle = "Title",
    WaveUserHeader = "Title",
    WaveAssistantHeader = "Title",
    WaveBusy = "DiagnosticWarn",
    WaveIdle = "DiagnosticOk",
    WaveNotice = "Comment",
    WaveError = "DiagnosticError",
    WaveTrust = "DiagnosticWarn",
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
    WaveAgentNote = "DiagnosticWarn",
    WaveMentionAgent = "Special",
    WaveMentionFile = "Underlined",
  }
  for name, target in pairs(links) do
    vim.api.nvim_set_hl(0, name, { link = target, default = true })
  end
  require("wave.colors").define()
end

function M.register()
  if registered then
    return
  end
  registered = true
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
  command("WaveTrust", function()
    wave().trust()
  end, { desc = "Decide whether to trust the project's own settings (hooks, sandbox, ...)" })
  command("WaveWorktrees", function()
    wave().worktrees()
  end, { desc = "List kept worktrees (diff, remove)" })
  command("WaveMcp", function(args)
    wave().mcp(args.fargs)
  end, {
    nargs = "*",
    desc = "Show the project's MCP servers; approve or deny one (:WaveMcp approve <name>)",
    complete = function(_, line)
      return require("wave.mcp").complete(require("wave").project_root(), line)
    end,
  })

  vim.keymap.set("n", "<Plug>(WaveChat)", "<Cmd>WaveChat<CR>", { desc = "Wave: open the chat" })
  vim.keymap.set("n", "<Plug>(WaveStop)", "<Cmd>WaveStop<CR>", { desc = "Wave: stop the turn" })
  vim.keymap.set("n", "<Plug>(WaveSessions)", "<Cmd>WaveSessions<CR>", {
    desc = "Wave: resume a session",
  })

  -- Agent definition files get the server's diagnostics, completion and hover.
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = vim.api.nvim_create_augroup("wave.agent_files", { clear = true }),
    pattern = {
      "*/.wave/agents/*.md", "*/.wave/agents/**/*.md",
      "*/.claude/agents/*.md", "*/.claude/agents/**/*.md",
      "*/.wave/plugins/*/agents/*.md", "*/.wave/plugins/*/agents/**/*.md",
    },
    callback = function(ev)
      if require("wave.config").get().attach_agent_files then
        require("wave.client").attach(ev.buf)
      end
    end,
  })

  highlights()
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = vim.api.nvim_create_augroup("wave.highlights", { clear = true }),
    callback = highlights,
  })
end

return M
