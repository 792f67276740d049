--- A chat with the agent of one project: its session, a transcript buffer and an input
--- buffer, shown as a split (`:WaveChat`).
local client = require("wave.client")
local compat = require("wave.compat")
local config = require("wave.config")
local mentions = require("wave.mentions")
local render = require("wave.render")
local Transcript = require("wave.transcript")
local trust = require("wave.trust")

local M = {}

local SESSION_BUSY = -32010
local REQUEST_CANCELLED = -32800

---@class wave.Chat
---@field root string
---@field session_id string?
---@field resume_id string? a session to resume at the next message (after a server restart)
---@field mode string
---@field transcript wave.Transcript
---@field input_buf integer
---@field request_id integer? the running `wave/chat/send`
---@field turn_running boolean a turn runs (ours or one the server started by itself)
---@field trust_update table? the session's last `workspaceTrust` (shown again after a reload)
---@field context {tokens: integer, window: integer}? the last `contextUsage` of the session
local Chat = {}
Chat.__index = Chat

---@type table<string, wave.Chat>
local chats = {}
---@type table<string, table> `workspaceTrust` updates of sessions whose chat is not known yet
local early = {}

local function notify(message, level)
  vim.notify("wave: " .. message, level or vim.log.levels.INFO)
end

local function scratch(name, filetype)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = filetype
  return buf
end

---@param root string
---@return wave.Chat
function Chat.new(root)
  local self = setmetatable({ root = root, turn_running = false }, Chat)
  self.mode = config.get().permission_mode
  self:_ensure_buffers()
  return self
end

--- A buffer still holding its text (`:bdelete` unloads a scratch buffer: its text is gone).
local function usable(buf)
  return buf ~= nil and vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_is_loaded(buf)
end

local function wipe(buf)
  if buf and vim.api.nvim_buf_is_valid(buf) then
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
  end
end

--- Make the transcript and input buffers again if they were deleted.
---@return boolean rebuilt the transcript is new (empty)
function Chat:_ensure_buffers()
  local rebuilt = false
  if not (self.transcript and usable(self.transcript.buf)) then
    wipe(self.transcript and self.transcript.buf)
    local buf = scratch("wave://chat/" .. self.root, "markdown")
    vim.bo[buf].modifiable = false
    self.transcript = Transcript.new(buf)
    self:_setup_transcript()
    rebuilt = true
  end
  if not usable(self.input_buf) then
    wipe(self.input_buf)
    self.input_buf = scratch("wave://input/" .. self.root, "wave_input")
    self:_setup_input()
  end
  return rebuilt
end

--- The chat of a buffer if it is one of ours.
---@param buf integer
---@return wave.Chat?
function M.of_buffer(buf)
  for _, chat in pairs(chats) do
    if chat.input_buf == buf or chat.transcript.buf == buf then
      return chat
    end
  end
end

--- The chat of the current buffer, else of the project of the current buffer.
---@param create boolean? make one when there is none
---@return wave.Chat?
function M.current(create)
  local buf = vim.api.nvim_get_current_buf()
  local own = M.of_buffer(buf)
  if own then
    return own
  end
  local root = client.root(buf)
  if not chats[root] and create then
    chats[root] = Chat.new(root)
  end
  return chats[root]
end

---@param session_id string
---@return wave.Chat?
function M.of_session(session_id)
  for _, chat in pairs(chats) do
    if chat.session_id == session_id then
      return chat
    end
  end
end

function M.all()
  return vim.tbl_values(chats)
end

-- Buffers and windows ------------------------------------------------------------------

local function map(buf, mode, lhs, rhs, desc, opts)
  if lhs and lhs ~= false and lhs ~= "" then
    local options = vim.tbl_extend("force", { buffer = buf, desc = desc }, opts or {})
    vim.keymap.set(mode, lhs, rhs, options)
  end
end

local function chat_keys(self, buf)
  local keys = config.get().keymaps
  for mode, lhs in pairs(keys.stop or {}) do
    map(buf, mode, lhs, function()
      self:stop()
    end, "Wave: stop the turn")
  end
  for mode, lhs in pairs(keys.close or {}) do
    map(buf, mode, lhs, function()
      self:close()
    end, "Wave: close the chat")
  end
end

function Chat:_setup_transcript()
  local buf = self.transcript.buf
  chat_keys(self, buf)
  map(buf, "n", "i", function()
    self:focus_input(true)
  end, "Wave: write a message")
end

function Chat:_setup_input()
  local input = self.input_buf
  vim.bo[input].omnifunc = "v:lua.require'wave.completion'.omnifunc"
  if compat.has_011 then
    vim.bo[input].completeopt = "menuone,noinsert,popup"
  end
  chat_keys(self, input)
  for mode, lhs in pairs(config.get().keymaps.send or {}) do
    map(input, mode, lhs, function()
      self:submit()
    end, "Wave: send the message")
  end
  require("wave.completion").setup_input(input)
  local group = vim.api.nvim_create_augroup("wave.chat." .. input, { clear = true })
  vim.api.nvim_create_autocmd(
    { "TextChanged", "TextChangedI", "CompleteDone", "InsertLeave", "BufEnter" },
    {
      group = group,
      buffer = input,
      callback = function()
        mentions.decorate(input, 0, nil, config.get().chat.conceal_mentions)
      end,
    }
  )
end

---@return integer? window of the transcript in the current tab
function Chat:_window(buf)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
end

local function size(value, total)
  return value < 1 and math.floor(total * value) or value
end

local function style(win, conceal_cursor)
  local options = {
    number = false,
    relativenumber = false,
    signcolumn = "no",
    foldcolumn = "0",
    spell = false,
    list = false,
    wrap = true,
    linebreak = true,
    breakindent = true,
    cursorline = false,
    conceallevel = config.get().chat.conceal_mentions and 2 or 0,
    concealcursor = conceal_cursor,
  }
  for name, value in pairs(options) do
    vim.api.nvim_set_option_value(name, value, { scope = "local", win = win })
  end
end

--- Show the chat in the current tab (or focus it) and put the cursor in the input.
function Chat:open()
  local opts = config.get().chat
  if self:_ensure_buffers() and self.session_id then
    self:_load_history(self.session_id)
  end
  local transcript_win = self:_window(self.transcript.buf)
  if not transcript_win then
    local buf = self.transcript.buf
    if opts.position == "tab" then
      vim.cmd("tab sbuffer " .. buf)
      transcript_win = vim.api.nvim_get_current_win()
    elseif opts.position == "bottom" then
      transcript_win = vim.api.nvim_open_win(buf, true, {
        split = "below",
        win = -1,
        height = size(opts.height, vim.o.lines),
      })
    else
      transcript_win = vim.api.nvim_open_win(buf, true, {
        split = opts.position == "left" and "left" or "right",
        win = -1,
        width = size(opts.width, vim.o.columns),
      })
      vim.wo[transcript_win].winfixwidth = true
    end
    style(transcript_win, "nc")
    local last = vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_win_set_cursor(transcript_win, { last, 0 })
  end
  local input_win = self:_window(self.input_buf)
  if not input_win then
    input_win = vim.api.nvim_open_win(self.input_buf, true, {
      split = "below",
      win = transcript_win,
      height = opts.input_height,
    })
    vim.wo[input_win].winfixheight = true
    style(input_win, "nvic")
  end
  self:refresh_winbar()
  vim.api.nvim_set_current_win(input_win)
end

---@param insert boolean? start Insert mode at the end of the input
function Chat:focus_input(insert)
  self:open()
  if insert then
    vim.cmd("startinsert!")
  end
end

--- Close the chat's windows in the current tab (the session lives on).
function Chat:close()
  for _, buf in ipairs({ self.input_buf, self.transcript.buf }) do
    local win = self:_window(buf)
    if win then
      if #vim.api.nvim_tabpage_list_wins(0) > 1 then
        vim.api.nvim_win_close(win, false)
      elseif #vim.api.nvim_list_tabpages() > 1 then
        vim.cmd("tabclose") -- the chat's own tab (position = "tab")
      end
    end
  end
end

local function escape(text)
  return (text:gsub("%%", "%%%%"))
end

function Chat:refresh_winbar()
  local state = self.turn_running and "%#WaveBusy#● answering%*" or "%#WaveIdle#○ ready%*"
  local name = escape(vim.fn.fnamemodify(self.root, ":t"))
  local bar = ("%%#WaveTitle# Wave %%* %s · %s · %s"):format(name, escape(self.mode), state)
  if self.tokens then
    bar = bar .. ("%%=%%#Comment#%s tokens %%*"):format(render.thousands(self.tokens))
  end
  if self.context then
    local usage = render.context_usage(self.context.tokens, self.context.window)
    bar = bar .. (self.tokens and "" or "%=") .. "%#Comment#· " .. escape(usage) .. " %*"
  end
  local win = self:_window(self.transcript.buf)
  if win then
    vim.wo[win].winbar = bar
  end
  local keys = config.get().keymaps
  local send = keys.send and keys.send.n or nil
  local hint = (send and (escape(send) .. " send · ") or "") .. "@ subagents and files"
  local input_win = self:_window(self.input_buf)
  if input_win then
    vim.wo[input_win].winbar = "%#WaveTitle# Message %* %#Comment#" .. hint .. "%*"
  end
end

-- The session ------------------------------------------------------------------------

--- Call `fn(client)` with the chat's session ready (created, or resumed after a restart);
--- `on_fail()` when there is no server or no session.
---@param fn fun(client: vim.lsp.Client)
---@param on_fail fun()?
function Chat:with_session(fn, on_fail)
  on_fail = on_fail or function() end
  local started = client.with_client(self.root, function(c)
    if self.session_id then
      fn(c)
      return
    end
    if self.waiting then
      table.insert(self.waiting, { fn, on_fail })
      return
    end
    self.waiting = { { fn, on_fail } }
    local params = { cwd = self.root, permissionMode = self.mode, sessionId = self.resume_id }
    self:_open_session(c, params, function(result, err)
      local queue = self.waiting or {}
      self.waiting = nil
      if err then
        notify("could not start a session: " .. err.message, vim.log.levels.ERROR)
      end
      for _, queued in ipairs(queue) do
        if err then
          queued[2]()
        else
          queued[1](c)
        end
      end
    end)
  end, on_fail)
  if not started then
    on_fail()
  end
end

--- `wave/session/new` (a new or a resumed session), after the folder's trust question if
--- it needs one; the chat takes the session, and a `workspaceTrust` that came first.
function Chat:_open_session(c, params, on_done)
  trust.before_session(c, self.root, function()
    self.trust_update = nil
    client.request(c, "wave/session/new", params, function(result, err)
      if not err then
        self.session_id, self.client_id, self.resume_id = result.sessionId, c.id, nil
        local pending = early[result.sessionId]
        early[result.sessionId] = nil
        if pending then
          self:on_update(pending)
        end
      end
      on_done(result, err)
    end)
  end)
end

--- Send the input buffer's text.
function Chat:submit()
  local lines = vim.api.nvim_buf_get_lines(self.input_buf, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  if text == "" then
    return
  end
  local instructions = text == "/compact" and "" or text:match("^/compact%s+(.*)$")
  if instructions then -- also during a turn: the server says why it cannot
    vim.api.nvim_buf_set_lines(self.input_buf, 0, -1, false, { "" })
    self:compact(vim.trim(instructions))
    return
  end
  if self.request_id then
    notify("still answering the previous message (:WaveStop to stop it)", vim.log.levels.WARN)
    return
  end
  vim.api.nvim_buf_set_lines(self.input_buf, 0, -1, false, { "" })
  self:send(text, function()
    vim.api.nvim_buf_set_lines(self.input_buf, 0, -1, false, lines)
  end)
end

---@param text string
---@param on_refused fun()? the message was not taken (busy session, no server)
function Chat:send(text, on_refused)
  on_refused = on_refused or function() end
  self.request_id = -1 -- taken until the request has its id
  self:with_session(function(c)
    self.turn_ended = false
    self.turn_running = true
    self:refresh_winbar()
    local ok, id = compat.request(
      c,
      "wave/chat/send",
      { sessionId = self.session_id, text = text },
      function(err, result)
        self.request_id = nil
        if err and err.code == SESSION_BUSY then
          notify(err.message, vim.log.levels.WARN)
          on_refused()
        elseif err and err.code == REQUEST_CANCELLED then
          self.transcript:notice("Stopped.")
        elseif err then
          self.transcript:notice("Error: " .. err.message, "WaveError")
        elseif result and result.status ~= "completed" and not self.turn_ended then
          self.transcript:_turn_ended(result)
        end
        if not self.turn_ended then
          self.turn_running = false
        end
        self:refresh_winbar()
      end
    )
    self.request_id = ok and id or nil
  end, function()
    self.request_id = nil
    on_refused()
  end)
end

--- `/compact [instructions]`: `wave/session/compact`; the `compacted` update writes the
--- line, an error (a running turn, a failed summary) is written as one.
---@param instructions string? what the summary must keep
function Chat:compact(instructions)
  self:with_session(function(c)
    local params = { sessionId = self.session_id }
    if instructions and instructions ~= "" then
      params.instructions = instructions
    end
    notify("compacting the conversation…")
    client.request(c, "wave/session/compact", params, function(result, err)
      if err then
        self.transcript:notice("Error: " .. err.message, "WaveError")
      elseif result and not result.compacted then
        self.transcript:notice("Nothing to compact yet.")
      end
    end)
  end)
end

--- Cancel the running turn (`$/cancelRequest` on its `wave/chat/send`).
function Chat:stop()
  local c = self.client_id and vim.lsp.get_client_by_id(self.client_id)
  if self.request_id and self.request_id ~= -1 and c then
    compat.cancel_request(c, self.request_id)
  elseif self.turn_running then
    notify("this turn was started by the server for a background task; it cannot be stopped")
  else
    notify("nothing to stop")
  end
end

--- Apply a server update of this chat's session.
function Chat:on_update(update)
  if not usable(self.transcript.buf) then
    return -- deleted by the user: rebuilt from the session's messages at the next open
  end
  if update.kind == "usage" and update.total then
    self.tokens = update.total.total_tokens
    self:refresh_winbar()
  elseif update.kind == "turnEnded" then
    self.turn_ended = true
    self.turn_running = false
    self:refresh_winbar()
  elseif update.kind == "workspaceTrust" then
    self.trust_update = update
  elseif update.kind == "contextUsage" then
    self.context = { tokens = update.tokens, window = update.windowTokens }
    self:refresh_winbar()
    vim.cmd.redrawstatus({ bang = true })
  elseif
    update.kind == "userMessage"
    or update.kind == "assistantDelta"
    or update.kind == "thinkingDelta"
  then
    if not self.turn_running then
      self.turn_running = true
      self:refresh_winbar()
    end
  end
  self.transcript:on_update(update)
end

--- Switch the chat to a saved (or live) session and show its history.
---@param session_id string
function Chat:resume(session_id)
  if self.request_id then
    notify("stop the running turn first (:WaveStop)", vim.log.levels.WARN)
    return
  end
  client.with_client(self.root, function(c)
    local params = { sessionId = session_id, permissionMode = self.mode }
    self:_open_session(c, params, function(_, err)
      if err then
        notify("could not resume " .. session_id .. ": " .. err.message, vim.log.levels.ERROR)
        return
      end
      self:_load_history(session_id, function()
        self.transcript:notice("Resumed session " .. session_id)
        self:open()
      end)
    end)
  end)
end

--- Fill the transcript with a session's messages (`wave/session/messages`).
---@param session_id string
---@param done fun()?
function Chat:_load_history(session_id, done)
  client.with_client(self.root, function(c)
    client.request(c, "wave/session/messages", { sessionId = session_id }, function(res, err)
      if err then
        notify("could not read " .. session_id .. ": " .. err.message, vim.log.levels.ERROR)
        return
      end
      self.transcript:load(res.messages or {})
      if self.trust_update then -- what is held back stays in view
        self.transcript:on_update(self.trust_update)
      end
      if done then
        done()
      end
    end)
  end)
end

--- Start a new conversation in this chat (the previous session stays saved).
function Chat:new_session()
  if self.request_id then
    notify("stop the running turn first (:WaveStop)", vim.log.levels.WARN)
    return false
  end
  self.session_id, self.resume_id, self.turn_running, self.tokens = nil, nil, false, nil
  self.trust_update, self.context = nil, nil
  self.transcript:reset()
  self:refresh_winbar()
  return true
end

--- Set the permission mode (of the live session, and of the next one).
---@param mode string
function Chat:set_mode(mode)
  if not self.session_id then
    self.mode = mode
    self:refresh_winbar()
    notify("permission mode: " .. mode)
    return
  end
  client.with_client(self.root, function(c)
    local params = { sessionId = self.session_id, permissionMode = mode }
    client.request(c, "wave/session/configure", params, function(result, err)
      if err then
        notify("could not set the mode: " .. err.message, vim.log.levels.ERROR)
        return
      end
      self.mode = result.permissionMode or mode
      self:refresh_winbar()
      notify("permission mode: " .. self.mode)
    end)
  end)
end

---@param code integer the server's exit code
function Chat:on_client_exit(code)
  local had_session = self.session_id ~= nil
  if had_session then
    self.resume_id = self.session_id
  end
  local queued = self.waiting or {}
  self.session_id, self.client_id, self.request_id, self.waiting = nil, nil, nil, nil
  self.turn_running = false
  if had_session then
    local text = ("The server stopped (exit code %d); the next message resumes this session.")
    self.transcript:notice(text:format(code or -1), "WaveError")
  end
  for _, waiting in ipairs(queued) do
    waiting[2]() -- messages that waited for a session are not taken
  end
  self:refresh_winbar()
end

client.subscribe("chat", function(event)
  if event.type == "update" then
    local chat = M.of_session(event.params.sessionId)
    if chat and chat.client_id == event.client_id then
      chat:on_update(event.params)
    elseif event.params.kind == "workspaceTrust" and event.params.sessionId then
      early[event.params.sessionId] = event.params -- before the answer to wave/session/new
    end
  elseif event.type == "progress" then
    local params = event.params or {}
    for _, chat in pairs(chats) do
      if chat.client_id == event.client_id then
        chat.transcript:on_progress(params.token, params.value or {})
      end
    end
  elseif event.type == "exit" then
    local chat = chats[event.root]
    if chat then
      chat:on_client_exit(event.code)
    end
  end
end)

M.Chat = Chat

return M
