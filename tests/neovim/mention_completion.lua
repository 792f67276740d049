-- `@Exp` in the chat input: the omnifunc asks wave/chatInput/completion, Explore comes
-- first; accepting inserts `[@agent:Explore]`, shown as a highlighted `@Explore`.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("WaveChat")
local chat = H.chat()
H.wait("the server", function()
  local client = H.client()
  return client and client.initialized
end)
local input = chat.input_buf
H.eq("v:lua.require'wave.completion'.omnifunc", vim.bo[input].omnifunc, "omnifunc")

-- Type in Insert mode: `@` opens the menu by itself, more letters narrow it (the server
-- is asked again), <CR> accepts the first item. Keys run as with :normal.
local seen = {} -- the menu's items, as last shown
vim.api.nvim_create_autocmd("CompleteChanged", {
  buffer = input,
  callback = function()
    seen = vim.fn.complete_info({ "items" }).items
  end,
})
vim.api.nvim_feedkeys(vim.keycode("iask é😀 @Exp<CR> where?<Esc>"), "tx", false)
H.truthy(#seen > 0, "the @ menu opened")
H.eq("@Explore", seen[1].abbr, "Explore first: " .. vim.inspect(seen))
H.eq("[@agent:Explore]", seen[1].word, "the first item inserts the tag")
H.eq("agent", seen[1].kind, "kind")
H.contains(seen[1].menu, "search agent", "description")
for _, item in ipairs(seen) do
  H.truthy(item.abbr ~= "@reviewer", "only matching items: " .. vim.inspect(seen))
end
local line = vim.api.nvim_buf_get_lines(input, 0, 1, false)[1]
H.eq("ask é😀 [@agent:Explore] where?", line, "input text")

-- Displayed as `@Explore`: `[`, `agent:` and `]` concealed, the tag highlighted.
local function marks()
  local ns = require("wave.mentions").ns
  return vim.api.nvim_buf_get_extmarks(input, ns, 0, -1, { details = true })
end
H.wait("the mention's extmarks", function()
  return #marks() > 0
end)
local start = line:find("[@agent:", 1, true) - 1
local concealed, highlighted = {}, false
for _, mark in ipairs(marks()) do
  local col, details = mark[3], mark[4]
  if details.conceal == "" then
    table.insert(concealed, line:sub(col + 1, details.end_col))
  elseif details.hl_group == "WaveMentionAgent" then
    highlighted = col == start and details.end_col == start + #"[@agent:Explore]"
  end
end
H.eq({ "[", "agent:", "]" }, concealed, "concealed parts")
H.truthy(highlighted, "the tag is highlighted")
H.eq(2, vim.wo[vim.fn.bufwinid(input)].conceallevel, "conceallevel of the input")

-- One backspace after the tag removes it whole.
vim.api.nvim_buf_set_lines(input, 0, -1, false, { "hi [@agent:Explore]" })
vim.api.nvim_win_set_cursor(vim.fn.bufwinid(input), { 1, 19 })
vim.api.nvim_feedkeys(vim.keycode("a<BS><Esc>"), "tx", false)
H.eq("hi ", vim.api.nvim_buf_get_lines(input, 0, 1, false)[1], "after <BS>")

-- Files come after the subagents; a cursor after non-ASCII text is counted in the
-- negotiated encoding (utf-8 here), so the query is still `@src/ap`.
local items = require("wave.completion").request_sync(input, 1, "ünï 😀 @src/ap", "")
H.truthy(#items > 0, "file items")
H.eq("src/app.py", items[1].label, "file item")
H.eq("[@file:src/app.py]", items[1].insertText, "file tag")
H.done()
