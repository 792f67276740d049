--- The wave-ls language client: one per project root, started with `vim.lsp.start`.
---
--- Chats and pickers ask for a ready client with `with_client(root, fn)`; agent files are
--- attached with `attach(buf)`. Server news (`wave/session/update`, `$/progress`) reach
--- whoever subscribed with `subscribe(fn)`.
local compat = require("wave.compat")
local config = require("wave.config")

local M = {}

M.name = "wave"

local UPDATE = "wave/session/update"
local PERMISSION = "wave/permission/request"

---@type table<integer, {[1]: fun(client: vim.lsp.Client), [2]: fun()?}[]> waiting for `initialize`
local waiting = {}
---@type table<integer, boolean>
local ready = {}
---@type table<integer, boolean> clients whose server ended (Neovim may still list them a while)
local exited = {}
---@type table<string, fun(event: table)>
local subscribers = {}

--- Receive every server event: `{type = "update" | "progress", client_id, params}`.
---@param key string one subscription per key (a later one replaces it)
---@param fn fun(event: table)?
function M.subscribe(key, fn)
  subscribers[key] = fn
end

local function publish(event)
  for _, fn in pairs(subscribers) do
    local ok, err = pcall(fn, event)
    if not ok then
      vim.notify("wave: " .. tostring(err), vim.log.levels.ERROR)
    end
  end
end

--- The project root of a buffer (or of the current directory): nearest `.git` or `.wave`.
---@param buf integer?
---@return string
function M.root(buf)
  local markers = config.get().root_markers
  local cwd = vim.fn.getcwd()
  local root = buf and vim.fs.root(buf, markers) or nil
  root = root or vim.fs.root(cwd, markers) or cwd
  return vim.fs.normalize(root)
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = vim.tbl_deep_extend("force", caps.experimental or {}, {
    wave = { permissionRequest = true },
  })
  return caps
end

local function init_options()
  local opts = config.get()
  return {
    model = opts.model,
    baseUrl = opts.base_url,
    permissionMode = opts.permission_mode,
    logFile = opts.log_file,
    logLevel = opts.log_level,
  }
end

local function client_config(root)
  return {
    name = M.name,
    cmd = config.get().cmd,
    root_dir = root,
    capabilities = capabilities(),
    init_options = init_options(),
    handlers = {
      [UPDATE] = function(_, params, ctx)
        publish({ type = "update", client_id = ctx.client_id, params = params })
      end,
      [PERMISSION] = function(_, params, ctx)
        return require("wave.permission").ask(params, ctx)
      end,
    },
    on_init = function(client)
      ready[client.id] = true
      require("wave.mcp").watch() -- MCP servers waiting for approval, or failing, are said
      local callbacks = waiting[client.id] or {}
      waiting[client.id] = nil
      for _, callback in ipairs(callbacks) do
        vim.schedule(function()
          callback[1](client)
        end)
      end
    end,
    on_exit = function(code, _, client_id)
      local dropped = waiting[client_id] or {}
      ready[client_id], waiting[client_id], exited[client_id] = nil, nil, true
      vim.schedule(function()
        for _, callback in ipairs(dropped) do
          if callback[2] then
            callback[2]() -- it ended before `initialize` was answered
          end
        end
        publish({ type = "exit", client_id = client_id, root = root, code = code })
      end)
    end,
  }
end

local progress_autocmd = nil

--- `$/progress` of our clients, after Neovim's own handler (`vim.lsp.status()`) saw it.
local function watch_progress()
  if progress_autocmd then
    return
  end
  progress_autocmd = vim.api.nvim_create_autocmd("LspProgress", {
    group = vim.api.nvim_create_augroup("wave.progress", { clear = true }),
    callback = function(ev)
      local data = ev.data or {}
      local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
      if client and client.name == M.name then
        publish({ type = "progress", client_id = data.client_id, params = data.params })
      end
    end,
  })
end

local function same_root(client, cfg)
  return client.name == M.name and client.root_dir == cfg.root_dir and not exited[client.id]
end

local function check_cmd()
  watch_progress()
  local exe = config.get().cmd[1]
  if vim.fn.executable(exe) == 1 then
    return true
  end
  vim.notify(
    ("wave: %q not found. Install wave-ls (pipx install wave-ls) or set `cmd` in setup()."):format(
      exe
    ),
    vim.log.levels.ERROR
  )
  return false
end

--- The running wave client of `root`, if any.
---@return vim.lsp.Client?
function M.get(root)
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name })) do
    if client.root_dir == root and not exited[client.id] then
      return client
    end
  end
end

--- Call `fn(client)` once the client of `root` has answered `initialize` (starting it if
--- needed).
---@param root string
---@param fn fun(client: vim.lsp.Client)
---@param on_fail fun()? the server ended before it was ready
---@return boolean started false when the server could not be started (the user was told)
function M.with_client(root, fn, on_fail)
  local existing = M.get(root)
  if existing and ready[existing.id] then
    fn(existing)
    return true
  end
  local id = existing and existing.id
  if not id then
    if not check_cmd() then
      return false
    end
    id = compat.start_detached(client_config(root), same_root)
  end
  if not id then
    vim.notify("wave: the server did not start (see :checkhealth wave)", vim.log.levels.ERROR)
    return false
  end
  if ready[id] then
    fn(assert(vim.lsp.get_client_by_id(id)))
    return true
  end
  waiting[id] = waiting[id] or {}
  table.insert(waiting[id], { fn, on_fail })
  return true
end

--- The folder whose client serves an agent file: user-level agents (`~/.wave/agents`) go
--- to the client of the current directory's project.
local function root_for_agent_file(buf)
  local path = vim.fs.normalize(vim.api.nvim_buf_get_name(buf))
  local user_dir = vim.fs.normalize("~/.wave")
  if vim.startswith(path, user_dir .. "/") then
    return M.root(nil)
  end
  return M.root(buf)
end

--- Attach an agent definition file to its project's server.
---@param buf integer
function M.attach(buf)
  if not check_cmd() then
    return
  end
  local root = root_for_agent_file(buf)
  vim.lsp.start(client_config(root), { bufnr = buf, reuse_client = same_root })
end

--- Send a request; `fn(result, err)` gets the answer.
---@param client vim.lsp.Client
---@param method string
---@param params table
---@param fn fun(result: any, err: table?)
function M.request(client, method, params, fn)
  return compat.request(client, method, params, function(err, result)
    fn(result, err)
  end)
end

return M
