--- `:WaveWorktrees`: kept git worktrees of the project: show one's diff in a tab, remove
--- one (after a confirmation).
local client = require("wave.client")

local M = {}

---@param worktree table as in `wave/worktrees/list`
function M.format(worktree)
  local name = worktree.name or vim.fn.fnamemodify(worktree.path, ":t")
  local changes = {}
  if worktree.changedFiles then
    table.insert(changes, ("%d changed files"):format(worktree.changedFiles))
  end
  if worktree.commits then
    table.insert(changes, ("%d commits"):format(worktree.commits))
  end
  local parts = { name, worktree.branch or "" }
  if #changes > 0 then
    table.insert(parts, table.concat(changes, ", "))
  end
  if worktree.owner then
    table.insert(parts, "by " .. worktree.owner)
  end
  return table.concat(parts, " · ")
end

--- Open `wave/worktrees/diff` of a worktree as a diff buffer in a new tab.
function M.show_diff(c, worktree)
  client.request(c, "wave/worktrees/diff", { path = worktree.path }, function(result, err)
    if err then
      vim.notify("wave: could not diff: " .. err.message, vim.log.levels.ERROR)
      return
    end
    local name = worktree.name or vim.fn.fnamemodify(worktree.path, ":t")
    local patch = (result or {}).patch or ""
    local lines = patch ~= "" and vim.split(patch:gsub("\n$", ""), "\n", { plain = true })
      or { "# no changes against " .. ((result or {}).baseCommit or "the base commit") }
    vim.cmd("tabnew")
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    pcall(vim.api.nvim_buf_set_name, buf, "wave://worktree/" .. name .. ".diff")
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].filetype = "diff"
    vim.bo[buf].modifiable = false
    local added, removed = 0, 0
    for _, file in ipairs((result or {}).files or {}) do
      added, removed = added + (file.additions or 0), removed + (file.deletions or 0)
    end
    local files = #((result or {}).files or {})
    vim.wo.winbar = ("%%#WaveTitle# worktree %s %%* %s · %d files · +%d -%d"):format(
      name:gsub("%%", "%%%%"),
      (worktree.branch or ""):gsub("%%", "%%%%"),
      files,
      added,
      removed
    )
  end)
end

local function confirm(prompt, yes, fn)
  vim.ui.select({ yes, "Cancel" }, { prompt = prompt, kind = "wave_confirm" }, function(choice)
    if choice == yes then
      fn()
    end
  end)
end

--- Remove a worktree and its branch; one with changes asks again before it is forced.
function M.remove(c, worktree, force)
  local params = { path = worktree.path, force = force or nil }
  client.request(c, "wave/worktrees/remove", params, function(result, err)
    if err then
      vim.notify("wave: could not remove: " .. err.message, vim.log.levels.ERROR)
    elseif result and result.removed then
      vim.notify("wave: removed " .. worktree.path)
    elseif not force then
      local reason = result and result.reason or "it has changes"
      confirm("Not removed: " .. reason .. ". Remove it anyway?", "Remove and lose them", function()
        M.remove(c, worktree, true)
      end)
    else
      vim.notify("wave: not removed: " .. (result and result.reason or "?"), vim.log.levels.WARN)
    end
  end)
end

local function act(c, worktree)
  local name = worktree.name or vim.fn.fnamemodify(worktree.path, ":t")
  vim.ui.select({ "Show diff", "Remove", "Cancel" }, {
    prompt = "Worktree " .. name .. ":",
    kind = "wave_worktree_action",
  }, function(choice)
    if choice == "Show diff" then
      M.show_diff(c, worktree)
    elseif choice == "Remove" then
      local branch = worktree.branch and (" and branch " .. worktree.branch) or ""
      confirm("Remove " .. worktree.path .. branch .. "?", "Remove", function()
        M.remove(c, worktree, false)
      end)
    end
  end)
end

---@param root string
function M.pick(root)
  client.with_client(root, function(c)
    client.request(c, "wave/worktrees/list", { cwd = root }, function(result, err)
      if err then
        vim.notify("wave: could not list worktrees: " .. err.message, vim.log.levels.ERROR)
        return
      end
      local worktrees = (result or {}).worktrees or {}
      if #worktrees == 0 then
        vim.notify("wave: no kept worktrees in " .. root)
        return
      end
      vim.ui.select(worktrees, {
        prompt = "Wave worktrees:",
        kind = "wave_worktree",
        format_item = M.format,
      }, function(worktree)
        if worktree then
          act(c, worktree)
        end
      end)
    end)
  end)
end

return M
