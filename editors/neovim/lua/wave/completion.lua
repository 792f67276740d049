--- `@` completion in the chat input through `wave/chatInput/completion`: an omnifunc (no
--- plugin needed), the shared request used by the nvim-cmp and blink.cmp sources, and the
--- input buffer's completion keys.
local client = require("wave.client")
local colors = require("wave.colors")
local compat = require("wave.compat")
local config = require("wave.config")
local mentions = require("wave.mentions")

local M = {}

local METHOD = "wave/chatInput/completion"

--- Byte column (0-based) where the `@` word ending at `col` starts, or nil: the word runs
--- from the last whitespace to the cursor and must start with `@` (as the server reads it).
---@param line string
---@param col integer 0-based byte column of the cursor
---@return integer?
function M.at_word(line, col)
  local word = line:sub(1, col):match("%S*$")
  if word:sub(1, 1) ~= "@" then
    return nil
  end
  return col - #word
end

--- The request's params: the whole input (with `before`..`after` as line `row`) and the
--- cursor (after `before`) counted in `encoding`.
---@param buf integer
---@param row integer 1-based line of the cursor
---@param before string the line up to the cursor
---@param after string the line after the cursor
---@param encoding string the client's position encoding
function M.params(buf, row, before, after, encoding)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local head = table.concat(vim.list_slice(lines, 1, row - 1), "\n")
  local prefix = (row > 1 and (head .. "\n") or "") .. before
  local tail = vim.list_slice(lines, row + 1)
  local text = prefix .. after .. (#tail > 0 and ("\n" .. table.concat(tail, "\n")) or "")
  local chat = require("wave.chat").of_buffer(buf)
  return {
    sessionId = chat and chat.session_id or nil,
    text = text,
    cursor = compat.code_units(prefix, encoding),
  }
end

local function client_of(buf)
  local chat = require("wave.chat").of_buffer(buf)
  local root = chat and chat.root or client.root(buf)
  local c = client.get(root)
  if not c then
    client.with_client(root, function() end) -- ready for the next `@`
  end
  return c
end

local function sorted(items)
  table.sort(items, function(a, b)
    return (a.sortText or a.label) < (b.sortText or b.label)
  end)
  return items
end

--- Candidates for the `@` word before the cursor, asynchronously.
---@param buf integer
---@param row integer 1-based
---@param before string
---@param after string
---@param callback fun(items: table[]) LSP CompletionItems, subagents first
---@return fun()? cancel
function M.request(buf, row, before, after, callback)
  local c = client_of(buf)
  if not c then
    callback({})
    return nil
  end
  local params = M.params(buf, row, before, after, c.offset_encoding or "utf-16")
  local ok, id = compat.request(c, METHOD, params, function(err, result)
    local items = err and {} or sorted((result or {}).items or {})
    colors.learn(items)
    callback(items)
  end)
  if ok and id then
    return function()
      compat.cancel_request(c, id)
    end
  end
end

--- The same, waiting at most `completion.timeout_ms` (for the omnifunc).
---@return table[]
function M.request_sync(buf, row, before, after)
  local c = client_of(buf)
  if not c then
    return {}
  end
  local params = M.params(buf, row, before, after, c.offset_encoding or "utf-16")
  local response = compat.request_sync(c, METHOD, params, config.get().completion.timeout_ms, buf)
  if not response or response.err or not response.result then
    return {}
  end
  local items = sorted(response.result.items or {})
  colors.learn(items)
  return items
end

local AGENT_KIND = 7

--- A Vim complete-item for an LSP item: `word` is the tag the server gives (`insertText`).
function M.vim_item(item)
  local agent = item.kind == AGENT_KIND
  local detail = item.detail or ""
  local group = agent and colors.group(type(item.data) == "table" and item.data.color or nil)
    or nil
  return {
    word = item.insertText or item.label,
    abbr = "@" .. item.label,
    menu = vim.fn.strcharpart(detail:gsub("%s+", " "), 0, 60),
    kind = agent and "agent" or "file",
    info = (type(item.documentation) == "table" and item.documentation.value
      or item.documentation
      or "") .. (type(item.data) == "table" and item.data.path and ("\n\n" .. item.data.path) or ""),
    equal = 1, -- the server filters: typed text need not prefix the tag
    user_data = { wave = { kind = agent and "agent" or "file", name = item.label } },
    -- The agent's colour on its name and kind (Neovim 0.11 reads these; older ignore them).
    abbr_hlgroup = group,
    kind_hlgroup = group,
  }
end

local pending ---@type {buf: integer, row: integer, line: string, col: integer, start: integer}?

--- 'omnifunc' of the input buffer (`<C-x><C-o>`).
---@param findstart integer
---@param base string
function M.omnifunc(findstart, base)
  local buf = vim.api.nvim_get_current_buf()
  if findstart == 1 then
    local row, col = unpack(vim.api.nvim_win_get_cursor(0))
    local line = vim.api.nvim_get_current_line()
    local start = M.at_word(line, col)
    if not start then
      pending = nil
      return -3 -- no `@` word: leave completion mode quietly
    end
    pending = { buf = buf, row = row, line = line, col = col, start = start }
    return start
  end
  if not pending or pending.buf ~= buf then
    return {}
  end
  local before = pending.line:sub(1, pending.start) .. base
  local after = pending.line:sub(pending.col + 1)
  local items = vim.tbl_map(M.vim_item, M.request_sync(buf, pending.row, before, after))
  return { words = items, refresh = "always" }
end

--- An nvim-cmp or blink.cmp source is serving the input buffers.
function M.plugin_source_active()
  return M.registered_cmp or M.registered_blink or false
end

--- Register the completion plugin sources that are installed (once).
function M.register_sources()
  if not M.registered_cmp then
    local ok, cmp = pcall(require, "cmp")
    if ok and type(cmp) == "table" and cmp.register_source then
      cmp.register_source("wave", require("wave.sources.cmp").new())
      cmp.setup.filetype("wave_input", { sources = { { name = "wave" } } })
      M.registered_cmp = true
    end
  end
  if not M.registered_blink then
    local ok, blink = pcall(require, "blink.cmp")
    if ok and type(blink) == "table" then
      local added = pcall(function()
        local add_provider = blink.add_source_provider or blink.add_provider
        add_provider("wave", { name = "Wave", module = "wave.sources.blink" })
        blink.add_filetype_source("wave_input", "wave")
      end)
      M.registered_blink = added
    end
  end
end

--- Keys and autocommands of an input buffer.
---@param buf integer
function M.setup_input(buf)
  M.register_sources()
  local group = vim.api.nvim_create_augroup("wave.completion." .. buf, { clear = true })
  if config.get().completion.auto_trigger then
    vim.api.nvim_create_autocmd("InsertCharPre", {
      group = group,
      buffer = buf,
      callback = function()
        if vim.v.char ~= "@" or M.plugin_source_active() then
          return
        end
        local col = vim.api.nvim_win_get_cursor(0)[2]
        local previous = vim.api.nvim_get_current_line():sub(col, col)
        if previous ~= "" and not previous:match("%s") then
          return
        end
        -- Right after the `@` (before any keys already typed after it).
        vim.api.nvim_feedkeys(vim.keycode("<C-x><C-o>"), "ni", false)
      end,
    })
  end
  if not M.plugin_source_active() then
    -- <CR> accepts the highlighted item, else the first one (the menu refreshes as you type,
    -- which leaves nothing selected).
    vim.keymap.set("i", "<CR>", function()
      if vim.fn.pumvisible() == 0 then
        return "<CR>"
      end
      return vim.fn.complete_info({ "selected" }).selected == -1 and "<C-n><C-y>" or "<C-y>"
    end, { buffer = buf, expr = true, desc = "Wave: accept the completion or a new line" })
  end
  -- Backspace right after a mention removes the whole tag, as if it were one character.
  vim.keymap.set("i", "<BS>", function()
    local col = vim.api.nvim_win_get_cursor(0)[2]
    local line = vim.api.nvim_get_current_line()
    local mention = mentions.ending_at(line, col)
    if not mention then
      return "<BS>"
    end
    local chars = vim.fn.strchars(line:sub(mention.start + 1, mention.finish))
    return string.rep("<BS>", chars)
  end, { buffer = buf, expr = true, desc = "Wave: delete a character or a whole mention" })
end

return M
