-- Compaction in the chat (issue 27): `/compact [instructions]` typed in the input calls
-- wave/session/compact; the `compacted` update is one line "conversation compacted (N -> M
-- tokens)", also when the history is reloaded (the message of kind compacted); during a
-- running turn the server's refusal is shown; `contextUsage` feeds
-- require("wave").statusline().
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")
local wave = require("wave")

H.eq("", wave.statusline(), "no context usage before a round")
vim.cmd("WaveChat")
local chat = H.chat()
H.extra_context = function()
  return "transcript:\n" .. H.text(chat.transcript.buf)
end

local function type_in(text)
  vim.api.nvim_buf_set_lines(chat.input_buf, 0, -1, false, { text })
  chat:submit()
end

local function count(pattern)
  local _, n = H.text(chat.transcript.buf):gsub(pattern, "")
  return n
end

chat:send("first question")
H.wait("the first answer", function()
  return H.text(chat.transcript.buf):find("first answer", 1, true) and not chat.request_id
end)
H.wait("the statusline component", function()
  return wave.statusline():match("^ctx [%d.]+k?/32k %d+%%$")
end)
local tokens = chat.context.tokens
H.eq(
  ("ctx %s/32k %d%%"):format(
    require("wave.render").short_count(tokens),
    math.floor(tokens * 100 / 32000 + 0.5)
  ),
  wave.statusline(),
  "statusline text"
)
H.contains(
  vim.wo[vim.fn.bufwinid(chat.transcript.buf)].winbar,
  wave.statusline():gsub("%%", "%%%%"),
  "the winbar shows it too"
)

type_in("/compact keep the numbers")
H.eq({ "" }, vim.api.nvim_buf_get_lines(chat.input_buf, 0, -1, false), "the input is cleared")
local LINE = "conversation compacted %([%d,]+ %-> [%d,]+ tokens%)"
H.wait("the compacted line", function()
  return count(LINE) == 1
end)
H.truthy(not H.text(chat.transcript.buf):find("SUMMARY-OF-EARLIER-WORK", 1, true), "no summary")
H.truthy(not H.text(chat.transcript.buf):find("/compact", 1, true), "not sent as a message")

-- During a running turn: the server refuses, the chat says why.
chat:send("slow story")
H.wait("the story to stream", function()
  return H.text(chat.transcript.buf):find("once upon a time", 1, true)
end)
type_in("/compact")
H.wait("the refusal", function()
  return H.text(chat.transcript.buf):find("Error: [^\n]*running a turn")
end)
H.wait("the story to end", function()
  return not chat.request_id and not chat.turn_running
end)
H.eq(1, count(LINE), "still one compacted line")

-- Reloaded from wave/session/messages: the message of kind compacted is the same one line.
local loaded = false
chat:_load_history(chat.session_id, function()
  loaded = true
end)
H.wait("the history reloaded", function()
  return loaded
end)
H.eq(1, count(LINE), "one compacted line after the reload")
H.contains(H.text(chat.transcript.buf), "first question", "what came before stays")
H.truthy(not H.text(chat.transcript.buf):find("SUMMARY-OF-EARLIER-WORK", 1, true), "no summary")
io.stdout:write(vim.env.WAVE_TEST_DUMP and H.text(chat.transcript.buf) or "")
io.stdout:write("COMPACTED " .. H.text(chat.transcript.buf):match(LINE) .. "\n")
H.done()
