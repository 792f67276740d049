-- First Neovim: one conversation, saved by the server. The server dies and the next message
-- starts it again and resumes the same session.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("WaveChat first question")
local chat = H.chat()
H.wait("the answer", function()
  return H.text(chat.transcript.buf):find("first answer", 1, true) and not chat.request_id
end)
local session = chat.session_id

vim.lsp.get_client_by_id(chat.client_id):stop(true)
H.wait("the stop notice", function()
  return H.text(chat.transcript.buf):find("The server stopped", 1, true)
end)
H.eq(nil, chat.session_id, "no live session")
chat:send("after restart")
H.wait("the answer from a new server", function()
  return H.text(chat.transcript.buf):find("back again", 1, true) and not chat.request_id
end)
H.eq(session, chat.session_id, "the same session, resumed")
io.stdout:write("SESSION " .. chat.session_id .. "\n")
H.done()
