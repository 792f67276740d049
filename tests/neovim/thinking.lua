-- A model's reasoning in the chat (issue 27): `thinkingDelta` updates are one dim line
-- ("▸ thinking… <what it thinks now>"), folded to "▸ thought: <first line> (N lines)" when
-- the round ends, before the answer and never in it; a history reloaded from
-- wave/session/messages shows the same line from the message's meta.thinking.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("WaveChat")
local chat = H.chat()
H.extra_context = function()
  return "transcript:\n" .. H.text(chat.transcript.buf)
end

local LINE = "▸ thought: First, greet the user back. (2 lines)"
local function rows()
  return vim.api.nvim_buf_get_lines(chat.transcript.buf, 0, -1, false)
end
local function row_of(text)
  for i, line in ipairs(rows()) do
    if line:find(text, 1, true) then
      return i
    end
  end
end

chat:send("say hello")
H.wait("the answer", function()
  return row_of("Hello there!") and not chat.request_id
end)
local thought, answer = row_of(LINE), row_of("Hello there!")
H.truthy(thought, "the folded thinking line")
H.truthy(thought < answer, "the thinking comes before the answer")
H.truthy(not row_of("Keep it short"), "folded: the rest of the thinking is not shown")
H.eq("Hello there!", vim.trim(rows()[answer]), "the answer holds only the answer")
local marks = vim.api.nvim_buf_get_extmarks(
  chat.transcript.buf,
  require("wave.transcript").ns,
  { thought - 1, 0 },
  { thought - 1, -1 },
  { details = true }
)
H.truthy(#marks > 0 and marks[1][4].hl_group == "Comment", "dim")

local loaded = false
chat:_load_history(chat.session_id, function()
  loaded = true
end)
H.wait("the history reloaded", function()
  return loaded
end)
H.truthy(row_of(LINE) and row_of(LINE) < row_of("Hello there!"), "the same line after a reload")
H.done()
