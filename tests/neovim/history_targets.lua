-- A reloaded history (wave/session/messages) names each call's target as its live block did
-- (issue 29 point 3): the server keeps it in the call's tool message (`meta.target`); a
-- history saved before that shows the first text argument.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")
local Transcript = require("wave.transcript")

-- The loader alone: a history without targets falls back, one with them shows them.
local function loaded(meta)
  local transcript = Transcript.new(vim.api.nvim_create_buf(false, true))
  transcript:load({
    {
      role = "assistant",
      content = "",
      tool_calls = {
        {
          id = "c1",
          ["function"] = { name = "Grep", arguments = '{"path": "src", "pattern": "x"}' },
        },
      },
    },
    { role = "tool", content = "src/app.py:1", tool_call_id = "c1", meta = meta },
  })
  return H.text(transcript.buf)
end
H.contains(loaded(nil), "Grep  src", "no target kept: the first text argument")
H.contains(loaded({ target = "x", toolKind = "search" }), "Grep  x", "the target kept")

-- With the real server: the reloaded line names what the live block named.
vim.cmd("WaveChat")
local chat = H.chat()
H.extra_context = function()
  return "transcript:\n" .. H.text(chat.transcript.buf)
end
chat:send("show the targets")
H.wait("the answer", function()
  return H.text(chat.transcript.buf):find("Targets shown.", 1, true) and not chat.request_id
end)
local reloaded = false
chat:_load_history(chat.session_id, function()
  reloaded = true
end)
H.wait("the history reloaded", function()
  return reloaded
end)
local text = H.text(chat.transcript.buf)
H.contains(text, "Grep  def answer", "reloaded: its pattern, not its path")
H.truthy(not text:find("Grep  src", 1, true), "not the first text argument")
H.done()
