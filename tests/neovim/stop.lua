-- :WaveStop cancels the running turn ($/cancelRequest): the transcript keeps what streamed
-- and says it stopped; the chat takes the next message.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("WaveChat")
local chat = H.chat()
H.extra_context = function()
  return "transcript:\n" .. H.text(chat.transcript.buf)
end
chat:send("write a long story")
H.wait("the story to start streaming", function()
  return H.text(chat.transcript.buf):find("Once upon a time", 1, true) ~= nil
end)
H.truthy(chat.turn_running, "the turn runs")
H.truthy(vim.wo[vim.fn.bufwinid(chat.transcript.buf)].winbar:find("answering", 1, true), "winbar")

local started = vim.uv.now()
vim.cmd("WaveStop")
H.wait("the turn to stop", function()
  return not chat.turn_running and not chat.request_id
end, 5000)
H.truthy(vim.uv.now() - started < 3000, "stopped quickly")
local text = H.text(chat.transcript.buf)
H.contains(text, "Once upon a time", "what streamed stays")
H.contains(text, "> Stopped.", "stop notice")
H.truthy(not text:find("The end.", 1, true), "the story did not finish")
H.truthy(vim.wo[vim.fn.bufwinid(chat.transcript.buf)].winbar:find("ready", 1, true), "winbar")

-- The session takes the next message normally.
chat:send("are you there?")
H.wait("the next answer", function()
  return H.text(chat.transcript.buf):find("Still here.", 1, true) ~= nil and not chat.request_id
end)
H.truthy(vim.wo[vim.fn.bufwinid(chat.transcript.buf)].winbar:find("[%d,]+ tokens"), "token total")

-- The transcript buffer deleted by hand comes back, from the session's history.
local old = chat.transcript.buf
vim.cmd("bdelete! " .. old)
vim.cmd("WaveChat")
H.wait("the transcript rebuilt", function()
  return chat.transcript.buf ~= old and H.text(chat.transcript.buf):find("Still here.", 1, true)
end)
H.contains(H.text(chat.transcript.buf), "## You\n\nare you there?", "history")
H.done()
