--- The chat transcript: a Markdown buffer written from `wave/session/update` and
--- `$/progress`.
---
--- Everything in the buffer belongs to a region (a user message, a round's text, one tool
--- line, one Agent block, a notice) in order; a region is re-rendered in place when its item
--- changes, so a streaming answer or a running subagent updates without touching the rest.
local mentions = require("wave.mentions")
local render = require("wave.render")

---@class wave.Region
---@field kind string
---@field count integer lines it holds now

---@class wave.Transcript
---@field buf integer
---@field regions wave.Region[]
local Transcript = {}
Transcript.__index = Transcript

Transcript.ns = vim.api.nvim_create_namespace("wave.transcript")

---@param buf integer
---@return wave.Transcript
function Transcript.new(buf)
  local self = setmetatable({ buf = buf }, Transcript)
  self:_forget()
  return self
end

function Transcript:_forget()
  self.regions = {}
  self.tools = {} -- toolCallId -> region
  self.agents = {} -- toolCallId -> agent state (also before its region exists)
  self.streaming = nil -- the region of the round's streaming text
  self.thinking = nil -- the region of the round's streaming reasoning
  self.turn_header = false -- the "## Wave" header of the current turn was written
  self.trust = nil -- the region of the workspace-trust notice (one per transcript)
end

--- Empty the buffer (before a resumed session's history is written).
function Transcript:reset()
  self:_forget()
  self:_write(function()
    vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, {})
  end)
  vim.api.nvim_buf_clear_namespace(self.buf, Transcript.ns, 0, -1)
  vim.api.nvim_buf_clear_namespace(self.buf, mentions.ns, 0, -1)
end

function Transcript:_write(fn)
  if not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  local follow = {}
  local last = vim.api.nvim_buf_line_count(self.buf)
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    if vim.api.nvim_win_get_cursor(win)[1] >= last - 1 then
      table.insert(follow, win)
    end
  end
  vim.bo[self.buf].modifiable = true
  fn()
  vim.bo[self.buf].modifiable = false
  vim.bo[self.buf].modified = false
  local count = vim.api.nvim_buf_line_count(self.buf)
  for _, win in ipairs(follow) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { count, 0 })
    end
  end
end

function Transcript:_start(region)
  local row = 0
  for _, other in ipairs(self.regions) do
    if other == region then
      return row
    end
    row = row + other.count
  end
  error("wave: region not in the transcript")
end

--- Put `rendered` in the place of `region`.
function Transcript:_set(region, rendered)
  local start = self:_start(region)
  local lines = rendered.lines
  self:_write(function()
    vim.api.nvim_buf_set_lines(self.buf, start, start + region.count, false, lines)
  end)
  region.count = #lines
  vim.api.nvim_buf_clear_namespace(self.buf, Transcript.ns, start, start + #lines)
  for _, mark in ipairs(rendered.marks) do
    local row, col, end_col, hl = unpack(mark)
    if end_col > col then
      vim.api.nvim_buf_set_extmark(self.buf, Transcript.ns, start + row, col, {
        end_col = end_col,
        hl_group = hl,
      })
    end
  end
  if region.kind == "user" then
    mentions.decorate(self.buf, start, start + #lines)
  end
end

---@return wave.Region
function Transcript:_append(kind, rendered)
  local region = { kind = kind, count = 0 }
  table.insert(self.regions, region)
  self:_set(region, rendered)
  return region
end

function Transcript:_last_kind()
  local last = self.regions[#self.regions]
  return last and last.kind
end

function Transcript:_assistant_header()
  if not self.turn_header then
    self.turn_header = true
    self:_append("header", render.header())
  end
end

--- A line of news from the plugin itself (a permission answer, a resumed session).
---@param text string
---@param hl string?
function Transcript:notice(text, hl)
  self:_append("notice", render.notice(text, hl))
end

function Transcript:_user_message(message)
  local meta = message.meta or {}
  if meta.kind == "compacted" then -- the summary's message: one line, not the summary
    self:_compacted(meta.tokensBefore, meta.tokensAfter)
    return
  elseif meta.taskNotification then
    local status = meta.status or "ended"
    self:notice(("Background task %s %s"):format(meta.taskNotification, status))
  elseif meta.reminder or meta.isMeta then
    return
  else
    self:_append("user", render.user(message))
  end
  self.turn_header = false
end

function Transcript:_delta(delta)
  if not self.streaming then
    self:_assistant_header()
    local after_tools = self:_last_kind() == "tool"
    self.streaming = self:_append("text", render.text("", after_tools))
    self.streaming.text = ""
    self.streaming.after_tools = after_tools
  end
  local region = self.streaming
  region.text = region.text .. delta
  self:_set(region, render.text(region.text, region.after_tools))
end

--- The model's reasoning as one dim line, folded: what it is thinking now while it streams,
--- then its first words and its size. Never part of the answer; the whole text stays in
--- the session (`meta.thinking` of the message).
---@param text string
---@param streaming boolean
local function thinking_lines(text, streaming)
  local lines = vim.split(vim.trim(text), "\n", { plain = true })
  local shown = streaming and lines[#lines] or lines[1]
  shown = vim.trim(shown or "")
  if vim.fn.strchars(shown) > 72 then
    shown = vim.fn.strcharpart(shown, 0, 71) .. "…"
  end
  local head = streaming and "▸ thinking… " or "▸ thought: "
  local tail = (not streaming and #lines > 1) and (" (%d lines)"):format(#lines) or ""
  local line = head .. shown .. tail
  return { lines = { line }, marks = { { 0, 0, #line, "Comment" } } }
end

function Transcript:_thinking(delta)
  if delta == "" then
    return
  end
  if not self.thinking then
    self:_assistant_header()
    self.thinking = self:_append("thinking", thinking_lines("", true))
    self.thinking.text = ""
  end
  local region = self.thinking
  region.text = region.text .. delta
  self:_set(region, thinking_lines(region.text, true))
end

--- The round's reasoning is whole: folded to its first line (`whole`: the message's
--- `meta.thinking`, written as a region of its own when nothing streamed it).
function Transcript:_thought(whole)
  local region = self.thinking
  self.thinking = nil
  local text = type(whole) == "string" and whole ~= "" and whole or (region and region.text)
  if not text or text == "" then
    return
  end
  if region then
    region.text = text
    self:_set(region, thinking_lines(text, false))
  else
    self:_assistant_header()
    self:_append("thinking", thinking_lines(text, false))
  end
end

function Transcript:_assistant_message(message)
  self:_thought((message.meta or {}).thinking)
  local content = message.content or ""
  local region = self.streaming
  self.streaming = nil
  if region then
    region.text = content
    self:_set(region, content ~= "" and render.text(content, region.after_tools) or {
      lines = {},
      marks = {},
    })
  elseif content ~= "" then
    self:_assistant_header()
    self:_append("text", render.text(content, self:_last_kind() == "tool"))
  end
end

local function decode(arguments)
  local ok, value = pcall(vim.json.decode, arguments or "")
  return ok and type(value) == "table" and value or {}
end

function Transcript:_agent_state(id)
  self.agents[id] = self.agents[id] or { status = "pending" }
  return self.agents[id]
end

function Transcript:_render_agent(id)
  local state = self.agents[id]
  local region = self.tools[id]
  if state and region then
    self:_set(region, render.agent(state))
  end
end

function Transcript:_agent_block(block)
  local state = self:_agent_state(block.toolCallId)
  local args = decode(block.arguments)
  local details = block.details or {}
  state.subagentType = details.subagentType or args.subagent_type or state.subagentType
  state.description = details.description or args.description or state.description
  state.prompt = args.prompt or state.prompt
  state.background = details.background or state.background
  state.color = details.color or state.color
  state.maxTurnsReached = details.maxTurnsReached == true or state.maxTurnsReached
  state.modelNote = details.modelNote or state.modelNote
  state.status = block.status
  local short = block.shortResult
  if block.status == "pending" or block.status == "running" then
    if short and short ~= "" then
      state.activity = short
    end
  else
    state.summary = details.summary or (short ~= "" and short) or state.summary
    state.error = details.error
    if details.summary and block.result then
      state.result = block.result
    end
    if details.worktree and details.worktree.summary then
      state.worktree = details.worktree.summary
    end
  end
  if not self.tools[block.toolCallId] then
    self:_assistant_header()
    self.tools[block.toolCallId] = self:_append("agent", render.agent(state))
  else
    self:_render_agent(block.toolCallId)
  end
end

function Transcript:_tool_block(block)
  if block.name == "Agent" then
    return self:_agent_block(block)
  end
  local region = self.tools[block.toolCallId]
  if region then
    self:_set(region, render.tool(block))
  else
    self:_assistant_header()
    self.tools[block.toolCallId] = self:_append("tool", render.tool(block))
  end
end

--- "conversation compacted (N -> M tokens)": live (`compacted` update) or reloaded (a
--- message of kind compacted).
function Transcript:_compacted(before, after)
  local function count(n)
    return type(n) == "number" and render.thousands(n) or "?"
  end
  self.streaming = nil
  self:notice(("conversation compacted (%s -> %s tokens)"):format(count(before), count(after)))
end

--- The one notice saying what the folder's trust holds back (updated in place).
function Transcript:_workspace_trust(update)
  local text = require("wave.trust").notice_text(update)
  local rendered = render.notice(text, update.trusted and "WaveNotice" or "WaveTrust")
  if self.trust then
    self:_set(self.trust, rendered)
  elseif update.trusted then
    return -- nothing was held back in this transcript: nothing to lift
  else
    self.trust = self:_append("notice", rendered)
  end
end

function Transcript:_turn_ended(update)
  self.streaming = nil
  self:_thought(nil)
  if update.status == "failed" then
    self:notice("Error: " .. (update.error or "the turn failed"), "WaveError")
  elseif update.status == "cancelled" then
    self:notice("Stopped.", "WaveNotice")
  end
end

--- Apply one `wave/session/update`.
---@param update table
function Transcript:on_update(update)
  local kind = update.kind
  if kind == "userMessage" then
    self.streaming = nil
    self:_user_message(update.message or {})
  elseif kind == "assistantDelta" then
    self:_delta(update.delta or "")
  elseif kind == "thinkingDelta" then
    self:_thinking(update.delta or "")
  elseif kind == "assistantMessage" then
    self:_assistant_message(update.message or {})
  elseif kind == "toolBlock" then
    self:_tool_block(update)
  elseif kind == "turnEnded" then
    self:_turn_ended(update)
  elseif kind == "workspaceTrust" then
    self:_workspace_trust(update)
  elseif kind == "compacted" then
    self:_compacted(update.tokensBefore, update.tokensAfter)
  end
end

--- Apply one `$/progress` of a delegation (token `wave/agent/<toolCallId>`).
---@param token string
---@param value table
---@return boolean handled the token belongs to this transcript
function Transcript:on_progress(token, value)
  local id = type(token) == "string" and token:match("^wave/agent/(.+)$")
  if not id or not self.agents[id] then
    return false
  end
  local state = self.agents[id]
  if value.kind == "begin" then
    state.status = "running"
    if not state.subagentType and value.title then
      state.subagentType = value.title:match("^([^:]+):") or value.title
    end
  elseif value.kind == "report" and value.message and not state.summary then
    state.activity = value.message
  elseif value.kind == "end" and value.message then
    state.summary = value.message
    if state.status == "running" or state.status == "pending" then
      local word = value.message:match("^(%a+)")
      state.status = (word == "Failed" and "failed") or (word == "Stopped" and "stopped")
        or "completed"
    end
  end
  self:_render_agent(id)
  return true
end

--- Write a saved session's history (`wave/session/messages`).
---@param messages table[]
function Transcript:load(messages)
  self:reset()
  local results, shown = {}, {}
  for _, message in ipairs(messages) do
    if message.role == "tool" and message.tool_call_id then
      results[message.tool_call_id] = message.content or ""
      -- What its block showed live (none in a history saved before them).
      shown[message.tool_call_id] = type(message.meta) == "table" and message.meta or {}
    end
  end
  for _, message in ipairs(messages) do
    if message.role == "user" then
      self:on_update({ kind = "userMessage", message = message })
    elseif message.role == "assistant" then
      self:on_update({ kind = "assistantMessage", message = message })
      for _, call in ipairs(message.tool_calls or {}) do
        local fn = call["function"] or {}
        local result = results[call.id]
        local meta = shown[call.id] or {}
        self:on_update({
          kind = "toolBlock",
          toolCallId = call.id,
          name = fn.name,
          arguments = fn.arguments,
          target = type(meta.target) == "string" and meta.target or nil,
          toolKind = type(meta.toolKind) == "string" and meta.toolKind or nil,
          status = result and "completed" or "failed",
          shortResult = "",
          result = result,
          details = fn.name == "Agent" and { summary = result and "Finished" or "Interrupted" }
            or nil,
        })
      end
    end
  end
end

--- The buffer's text (for tests and `:WaveChat` users who yank it).
function Transcript:text()
  return table.concat(vim.api.nvim_buf_get_lines(self.buf, 0, -1, false), "\n")
end

return Transcript
