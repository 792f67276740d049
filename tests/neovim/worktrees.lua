-- :WaveWorktrees: a kept worktree is listed; "Show diff" opens its diff in a tab; "Remove"
-- asks to confirm, and again when the worktree has changes.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

local answers = {}
H.script_select(function(prompt, items)
  local want = table.remove(answers, 1)
  for i, line in ipairs(prompt.items) do
    if line:find(want, 1, true) then
      return items[i]
    end
  end
  error("no item " .. want .. " in " .. vim.inspect(prompt))
end)

-- A session in a worktree "feature", closed (the worktree is kept), then changed by hand.
vim.cmd("WaveChat")
local chat = H.chat()
H.wait("the server", function()
  local client = H.client()
  return client and client.initialized
end)
local client = H.client()
local params = { cwd = chat.root, worktree = "feature" }
local made = client:request_sync("wave/session/new", params, 5000)
H.truthy(made and made.result, "session in a worktree: " .. vim.inspect(made))
local path = made.result.worktree.path
client:request_sync("wave/session/close", { sessionId = made.result.sessionId }, 5000)
vim.fn.writefile({ "# changed in the worktree" }, path .. "/README.md")
vim.fn.writefile({ "new" }, path .. "/new.txt")

answers = { "feature", "Show diff" }
vim.cmd("WaveWorktrees")
H.wait("the diff tab", function()
  return vim.bo.filetype == "diff"
end)
H.eq(2, #vim.api.nvim_list_tabpages(), "a new tab")
local diff = H.text(0)
H.contains(diff, "diff --git a/README.md b/README.md", "patch")
H.contains(diff, "+# changed in the worktree", "patch")
H.contains(diff, "+new", "new file")
H.contains(vim.wo.winbar, "2 files", "winbar")
local item = H.prompts[1].items[1]
H.truthy(item:find("^feature · worktree%-feature"), "list item: " .. item)
H.eq({ "Show diff", "Remove", "Cancel" }, H.prompts[2].items, "actions")
vim.cmd.tabclose()

local notices = {}
vim.notify = function(message)
  table.insert(notices, message)
end
answers = { "feature", "Remove", "Remove", "Remove and lose them" }
vim.cmd("WaveWorktrees")
H.wait("the removal to be reported", function()
  return vim.tbl_contains(notices, "wave: removed " .. path)
end)
H.eq(0, vim.fn.isdirectory(path), "the worktree is gone")
H.contains(H.prompts[5].prompt, "Remove " .. path, "confirmation")
H.contains(H.prompts[6].prompt, "Not removed:", "second confirmation")
local branches = vim.fn.systemlist({ "git", "branch", "--format=%(refname:short)" })
H.eq({ "main" }, branches, "its branch is gone too")
H.done()
