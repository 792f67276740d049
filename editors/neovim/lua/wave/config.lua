--- Options of wave.nvim: the defaults, and the user's `setup()` table merged over them.
local M = {}

M.permission_modes = { "default", "acceptEdits", "bypassPermissions", "plan" }

---@class wave.Config
M.defaults = {
  --- How to start the server (`wave-ls` serves LSP on stdio by default).
  cmd = { "wave-ls" },
  --- The session's model id; nil: the server's `WAVE_MODEL`.
  model = nil,
  --- The OpenAI-compatible endpoint; nil: the server's `OPENAI_BASE_URL`.
  base_url = nil,
  --- Permission mode of new sessions: default, acceptEdits, bypassPermissions or plan.
  permission_mode = "default",
  --- A project root is the nearest folder holding one of these.
  root_markers = { ".git", ".wave" },
  --- Attach the server to `.wave/agents/*.md` files (diagnostics, completion, hover).
  attach_agent_files = true,
  --- Server logs (never on stdout): a file path and a level (DEBUG, INFO, WARNING, ERROR).
  log_file = nil,
  log_level = nil,
  chat = {
    --- Where `:WaveChat` opens: "right", "left", "bottom" or "tab".
    position = "right",
    --- Width of a side chat (columns, or a fraction of the editor below 1).
    width = 0.4,
    --- Height of a bottom chat (lines, or a fraction below 1).
    height = 0.4,
    --- Lines of the input buffer.
    input_height = 5,
    --- Show `[@agent:x]` as a highlighted `@x` (conceal) in the input and transcript.
    conceal_mentions = true,
  },
  --- Keys in the chat buffers; false disables one.
  keymaps = {
    send = { n = "<CR>", i = "<C-s>" },
    stop = { n = "<C-c>" },
    close = { n = "q" },
  },
  completion = {
    --- Open the `@` menu while typing when no nvim-cmp / blink.cmp source is active.
    auto_trigger = true,
    --- Milliseconds to wait for the server's candidates (omnifunc is synchronous).
    timeout_ms = 1500,
  },
}

---@type wave.Config
local current = vim.deepcopy(M.defaults)

local function warn(message)
  vim.notify("wave: " .. message, vim.log.levels.WARN)
end

--- Merge `opts` over the defaults; a bad value is reported and falls back to its default.
---@param opts table?
---@return wave.Config
function M.setup(opts)
  opts = opts or {}
  if opts.api_key ~= nil or opts.apiKey ~= nil then
    warn("api_key is never read from the config: set OPENAI_API_KEY in the environment")
    opts = vim.deepcopy(opts)
    opts.api_key, opts.apiKey = nil, nil
  end
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  if type(merged.cmd) == "string" then
    merged.cmd = { merged.cmd }
  end
  if type(merged.cmd) ~= "table" or type(merged.cmd[1]) ~= "string" then
    warn("cmd must be a list of strings; using " .. M.defaults.cmd[1])
    merged.cmd = vim.deepcopy(M.defaults.cmd)
  end
  if not vim.tbl_contains(M.permission_modes, merged.permission_mode) then
    warn(
      ("permission_mode %q is not one of %s; using default"):format(
        tostring(merged.permission_mode),
        table.concat(M.permission_modes, ", ")
      )
    )
    merged.permission_mode = "default"
  end
  for _, key in ipairs({ "model", "base_url", "log_file", "log_level" }) do
    if merged[key] ~= nil and type(merged[key]) ~= "string" then
      warn(key .. " must be a string; ignored")
      merged[key] = nil
    end
  end
  current = merged
  return current
end

---@return wave.Config
function M.get()
  return current
end

return M
