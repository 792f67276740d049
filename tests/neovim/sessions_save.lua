-- First Neovim: one conversation, saved by the server when Neovim exits.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("WaveChat first question")
local chat = H.chat()
H.wait("the answer", function()
  return H.text(chat.transcript.buf):find("first answer", 1, true) and not chat.request_id
end)
io.stdout:write("SESSION " .. chat.session_id .. "\n")
H.done()
