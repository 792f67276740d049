--- `:checkhealth wave`: the server and its version, the model endpoint, the subagents the
--- project loads and the problems in their files, the project's workspace trust and its MCP
--- servers.
local M = {}

local health = vim.health

local function server_cmd()
  local cmd = vim.deepcopy(require("wave.config").get().cmd)
  -- `--stdio` serves LSP; the other subcommands take its place.
  return vim.tbl_filter(function(arg)
    return arg ~= "--stdio"
  end, cmd)
end

local function run(args)
  local ok, process = pcall(vim.system, args, { text = true })
  if not ok then
    return nil, tostring(process)
  end
  local done = process:wait(20000)
  if done.code ~= 0 and (done.stdout or "") == "" then
    local stderr = vim.trim(done.stderr or "")
    return nil, stderr ~= "" and stderr or ("exit " .. done.code)
  end
  return done
end

local function check_neovim()
  health.start("Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. version)
  else
    health.error("Neovim " .. version .. ": wave.nvim needs 0.10 or newer")
  end
end

---@return boolean found
local function check_server(root)
  health.start("Server")
  local cmd = server_cmd()
  local exe = cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    health.error(("%q not found"):format(exe), {
      "Install it: pipx install wave-ls (or pip install wave-ls in a virtualenv on your PATH)",
      'Or point the plugin at it: require("wave").setup({ cmd = { "/path/to/wave-ls" } })',
    })
    return false
  end
  local done, err = run(vim.list_extend(vim.deepcopy(cmd), { "--version" }))
  if not done then
    health.error(("%s --version failed: %s"):format(exe, err))
    return false
  end
  health.ok(("wave-ls %s (%s)"):format(vim.trim(done.stdout), vim.fn.exepath(exe)))
  local client = require("wave.client").get(root)
  if client then
    health.ok(
      ("running for %s (client %d, position encoding %s)"):format(
        root,
        client.id,
        client.offset_encoding or "?"
      )
    )
  else
    health.info("not running for " .. root .. " yet: :WaveChat or an agent file starts it")
  end
  return true
end

local function check_endpoint()
  health.start("Model endpoint")
  local opts = require("wave.config").get()
  local base_url = opts.base_url or vim.env.OPENAI_BASE_URL
  if base_url and base_url ~= "" then
    health.ok("endpoint: " .. base_url .. (opts.base_url and " (setup)" or " (OPENAI_BASE_URL)"))
  else
    health.warn("no endpoint configured: the chat opens, but every turn fails", {
      "Set OPENAI_BASE_URL (e.g. http://localhost:11434/v1) or base_url in setup()",
    })
  end
  local model = opts.model or vim.env.WAVE_MODEL
  if model and model ~= "" then
    health.ok("model: " .. model .. (opts.model and " (setup)" or " (WAVE_MODEL)"))
  else
    health.warn("no model configured", { "Set WAVE_MODEL or model in setup()" })
  end
  if vim.env.OPENAI_API_KEY and vim.env.OPENAI_API_KEY ~= "" then
    health.ok("OPENAI_API_KEY is set in the environment")
  else
    health.info("OPENAI_API_KEY is not set (fine for local endpoints; never put it in setup())")
  end
end

--- The subagents and problems: from the running server, else from `wave-ls agents --json`.
local function agents_of(root)
  local client = require("wave.client").get(root)
  if client then
    local compat = require("wave.compat")
    local response = compat.request_sync(client, "wave/agents/list", { cwd = root }, 5000)
    if response and response.result then
      return response.result
    end
  end
  local done, err = run(vim.list_extend(server_cmd(), { "agents", "--json", "--cwd", root }))
  if not done then
    return nil, err
  end
  local ok, decoded = pcall(vim.json.decode, done.stdout)
  if not ok then
    return nil, "wave-ls agents --json printed something else: " .. done.stdout
  end
  return decoded
end

local function check_agents(root)
  health.start("Subagents")
  local listed, err = agents_of(root)
  if not listed then
    health.error("could not list the subagents: " .. tostring(err))
    return
  end
  local names = vim.tbl_map(function(agent)
    return agent.name .. " (" .. agent.source .. ")"
  end, listed.agents or {})
  health.ok(("%d subagents loaded: %s"):format(#names, table.concat(names, ", ")))
  local problems = listed.problems or {}
  if #problems == 0 then
    health.ok("no problems in agent files")
  end
  for _, problem in ipairs(problems) do
    local path = vim.fn.fnamemodify(problem.path, ":~:.")
    local where = path .. (problem.line and (":" .. problem.line) or "")
    health.warn(where .. ": " .. problem.message, {
      "Open the file: the server marks the problem in place (`wave-ls agents` lists them all)",
    })
  end
end

--- The answer of the running server of `root` to `method`, or nil (said in the report).
local function ask_server(root, method, what)
  local client = require("wave.client").get(root)
  if not client then
    health.info("the server is not running for " .. root .. ": :WaveChat starts it")
    return nil
  end
  local response = require("wave.compat").request_sync(client, method, { cwd = root }, 5000)
  local result = response and response.result
  if type(result) ~= "table" then
    local err = response and response.err
    health.warn("could not " .. what .. ": " .. (err and err.message or "no answer"))
    return nil
  end
  return result
end

--- The project's workspace trust, from the running server (`wave/workspace/status`).
local function check_trust(root)
  health.start("Workspace trust")
  local status = ask_server(root, "wave/workspace/status", "read the trust state")
  if not status then
    return
  end
  local trust = require("wave.trust")
  local state = ("%s: %s"):format(status.root or root, trust.describe(status))
  if status.trusted or #(status.heldBack or {}) == 0 then
    health.ok(state)
    return
  end
  health.warn(state, vim.list_extend(trust.held_back(status), {
    ":WaveTrust to decide (the decision is kept in ~/.wave/trust.json)",
  }))
end

--- The project's MCP servers, from the running server (`wave/mcp/list`).
local function check_mcp(root)
  health.start("MCP servers")
  local listed = ask_server(root, "wave/mcp/list", "list the MCP servers")
  if not listed then
    return
  end
  local servers = listed.servers or {}
  if #servers == 0 then
    health.info("no MCP servers defined (.mcp.json, ~/.wave/settings.json)")
    return
  end
  local mcp = require("wave.mcp")
  for _, server in ipairs(servers) do
    local tools = #(server.tools or {})
    local line = ("%s: %s (%s, %s%s)"):format(
      server.name,
      mcp.status_text(server),
      server.scope or "?",
      server.transport or "?",
      tools > 0 and (", %d tool%s"):format(tools, tools == 1 and "" or "s") or ""
    )
    local error = server.error and server.error ~= "" and (": " .. server.error) or ""
    local running = { connected = true, starting = true, stopped = true }
    if running[server.status] then
      health.ok(line)
    elseif server.status == "needs-approval" then
      health.warn(line, {
        (":WaveMcp approve %s to start it (:WaveMcp deny %s to keep it off)"):format(
          server.name,
          server.name
        ),
      })
    elseif mcp.held_back(server) then
      health.warn(line .. error, { ":WaveTrust to trust the folder first" })
    elseif server.status == "failed" then
      health.warn(line .. error, { "Check its command or URL in the file that defines it" })
    else
      health.info(line .. error)
    end
  end
end

local function check_completion()
  health.start("Completion")
  health.ok("omnifunc (<C-x><C-o>) in the chat input")
  for _, plugin in ipairs({ { "cmp", "nvim-cmp" }, { "blink.cmp", "blink.cmp" } }) do
    if pcall(require, plugin[1]) then
      health.info(plugin[2] .. " found: a wave source is registered for the chat input")
    end
  end
end

function M.check()
  local root = require("wave.client").root(vim.api.nvim_get_current_buf())
  check_neovim()
  local found = check_server(root)
  check_endpoint()
  if found then
    check_agents(root)
    check_trust(root)
    check_mcp(root)
  end
  check_completion()
end

return M
