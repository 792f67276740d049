-- A later Neovim: :WaveSessions lists the saved session and resumes it (its history in the
-- transcript, the next message continues it); :WaveChat! starts another, and :WaveSessions
-- switches back.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")
local saved = assert(vim.env.WAVE_TEST_SESSION)

local pick = nil -- which listed item to choose
H.script_select(function(prompt, items)
  for i, line in ipairs(prompt.items) do
    if line:find(pick, 1, true) then
      return items[i]
    end
  end
end)

vim.cmd("WaveChat")
local chat = H.chat()
H.extra_context = function()
  return "transcript:\n" .. H.text(chat.transcript.buf) .. "\nprompts: " .. vim.inspect(H.prompts)
end
H.eq(nil, chat.session_id, "no session before the first message")

pick = "first question"
vim.cmd("WaveSessions")
H.wait("the resumed session", function()
  return chat.session_id == saved and H.text(chat.transcript.buf):find("Resumed", 1, true)
end)
H.eq(1, #H.prompts, "one prompt")
H.eq("wave_session", H.prompts[1].kind, "kind")
H.eq(1, #H.prompts[1].items, "one saved session")
H.truthy(H.prompts[1].items[1]:find("^first question · just now · %d+ messages$"), "item")
local text = H.text(chat.transcript.buf)
H.contains(text, "## You\n\nfirst question", "history: the question")
H.contains(text, "first answer", "history: the answer")

chat:send("follow up")
H.wait("the follow-up answer", function()
  return H.text(chat.transcript.buf):find("follow-up answer", 1, true) and not chat.request_id
end)

-- A new conversation, then back to the first one.
vim.cmd("WaveChat! second question")
H.wait("the second conversation", function()
  return H.text(chat.transcript.buf):find("second answer", 1, true) and not chat.request_id
end)
H.truthy(not H.text(chat.transcript.buf):find("first question", 1, true), "a fresh transcript")
local second = chat.session_id
H.truthy(second ~= saved, "a new session")

pick = "first question"
vim.cmd("WaveSessions")
H.wait("back in the first session", function()
  return chat.session_id == saved and H.text(chat.transcript.buf):find("follow-up answer", 1, true)
end)
local listed = H.prompts[2].items
H.eq(2, #listed, "two sessions")
H.truthy(listed[1]:find("^second question .* · current$"), "newest first, current: " .. listed[1])
H.truthy(listed[2]:find("^first question .* · live$"), "the first is live: " .. listed[2])
H.contains(H.text(chat.transcript.buf), "first question", "its history")
H.done()
