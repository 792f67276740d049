--- Workspace trust: before the first session of a folder whose repository ships settings
--- that run code or loosen the rules (hooks, sandbox settings, MCP servers, ...), ask once
--- with `vim.ui.select` whether to trust it (`wave/workspace/status`, then
--- `wave/workspace/trust`). The server keeps the answer under `~/.wave/`, so a folder is
--- asked about once; until it is trusted, those settings are held back and the chat says
--- which (the `workspaceTrust` update). `:WaveTrust` asks again.
local client = require("wave.client")

local M = {}

M.choices = { "Trust", "Don't trust" }

---@type table<string, table> the last status the server gave, by project root
M.status = {}
---@type table<string, boolean> roots asked about (or found decided) in this Neovim
local settled = {}

local function notify(message, level)
  vim.notify("wave: " .. message, level or vim.log.levels.INFO)
end

--- `.wave/settings.json` for a path inside `root`, else the path itself (with `~`).
function M.shown_path(path, root)
  path = vim.fs.normalize(path or "")
  root = vim.fs.normalize(root or "")
  if root ~= "" and vim.startswith(path, root .. "/") then
    return path:sub(#root + 2)
  end
  return vim.fn.fnamemodify(path, ":~")
end

--- One text per held-back item: its detail and its file.
---@param status table the wire status (`heldBack`, `root`)
---@return string[]
function M.held_back(status)
  local texts = {}
  for _, item in ipairs(status.heldBack or {}) do
    local where = M.shown_path(item.path, status.root)
    table.insert(texts, ("%s (%s)"):format(item.detail or item.kind or "?", where))
  end
  return texts
end

--- The same as a Markdown list.
function M.held_back_lines(status)
  return vim.tbl_map(function(text)
    return "- " .. text
  end, M.held_back(status))
end

--- What is held back, in a few words: `hooks, sandbox (.wave/settings.json)`.
function M.summary(status)
  local kinds, files, seen_kind, seen_file = {}, {}, {}, {}
  for _, item in ipairs(status.heldBack or {}) do
    local kind, where = item.kind or "?", M.shown_path(item.path, status.root)
    if not seen_kind[kind] then
      seen_kind[kind] = true
      table.insert(kinds, kind)
    end
    if not seen_file[where] then
      seen_file[where] = true
      table.insert(files, where)
    end
  end
  return ("%s (%s)"):format(table.concat(kinds, ", "), table.concat(files, ", "))
end

--- The `vim.ui.select` prompt (one line, pickers show it as a title).
function M.prompt(status)
  return ("Trust %s? Until you do, wave-ls holds back what its repository ships: %s"):format(
    vim.fn.fnamemodify(status.root or "", ":~"),
    M.summary(status)
  )
end

local function decide(c, root, status, on_done)
  vim.ui.select(M.choices, { prompt = M.prompt(status), kind = "wave_trust" }, function(choice)
    if not choice then
      on_done(status) -- dismissed: nothing kept, the session runs with them held back
      return
    end
    local params = { cwd = root, trusted = choice == M.choices[1] }
    client.request(c, "wave/workspace/trust", params, function(result, err)
      if err then
        notify("could not keep the trust decision: " .. err.message, vim.log.levels.ERROR)
        on_done(status)
        return
      end
      M.status[root] = result
      on_done(result)
    end)
  end)
end

--- Ask about `root` if its status needs a decision (once per Neovim), then `on_done(status)`.
---@param c vim.lsp.Client
---@param root string
---@param on_done fun(status: table?)
function M.before_session(c, root, on_done)
  if settled[root] then
    on_done(M.status[root])
    return
  end
  client.request(c, "wave/workspace/status", { cwd = root }, function(status, err)
    settled[root] = true
    if err or type(status) ~= "table" then
      on_done(nil) -- a server without workspace trust: nothing to ask
      return
    end
    M.status[root] = status
    if status.needsDecision then
      decide(c, root, status, on_done)
    else
      on_done(status)
    end
  end)
end

--- `:WaveTrust`: ask about `root` now (also when it was decided before).
---@param root string
function M.ask(root)
  client.with_client(root, function(c)
    client.request(c, "wave/workspace/status", { cwd = root }, function(status, err)
      if err or type(status) ~= "table" then
        notify("could not read the trust of " .. root .. ": " .. (err and err.message or "?"))
        return
      end
      settled[root] = true
      M.status[root] = status
      decide(c, root, status, function(result)
        local now = result or status
        notify(("%s is %s"):format(now.root or root, M.describe(now)))
      end)
    end)
  end)
end

--- A few words for a status: `trusted`, `not trusted (you chose so)`, ...
function M.describe(status)
  if status.trusted then
    return "trusted"
  end
  local count = #(status.heldBack or {})
  local why = status.decision == false and "you chose not to trust it" or "not asked yet"
  if count == 0 then
    return "not trusted (" .. why .. "), nothing held back"
  end
  return ("not trusted (%s): %d setting%s held back"):format(why, count, count == 1 and "" or "s")
end

--- The chat's notice for a `workspaceTrust` update.
---@param update table
---@return string
function M.notice_text(update)
  if update.trusted then
    return ("Trusted %s: its settings apply from the next step."):format(
      vim.fn.fnamemodify(update.root or "", ":~")
    )
  end
  local why = update.decision == false and "you chose not to trust it"
    or "it is not trusted yet"
  local lines = {
    ("Held back from %s because %s:"):format(vim.fn.fnamemodify(update.root or "", ":~"), why),
  }
  vim.list_extend(lines, M.held_back_lines(update))
  table.insert(lines, "Agent files, memory and rules still load. :WaveTrust to decide again.")
  return table.concat(lines, "\n")
end

return M
