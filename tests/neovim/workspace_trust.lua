-- Workspace trust: the project's repository ships `.wave/settings.json` turning the session
-- sandbox on (every command would run unasked). At the first session, vim.ui.select asks
-- "Trust <root>?"; "Don't trust" keeps it held back: the chat says so in one notice, the
-- command is asked about, :checkhealth warns. :WaveTrust then trusts it: the notice says so
-- and the next command runs unasked. A new session is not asked again.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

local trust_answers = { "Don't trust", "Trust" }
H.script_select(function(prompt)
  if prompt.kind == "wave_trust" then
    return table.remove(trust_answers, 1)
  end
  return "Deny"
end)

local function report()
  vim.cmd("checkhealth wave")
  local text = H.text(vim.api.nvim_get_current_buf())
  vim.cmd("bwipeout!")
  return text
end

local root = vim.fs.normalize(vim.fn.getcwd())
vim.cmd("WaveChat")
local chat = H.chat()
H.extra_context = function()
  return "transcript:\n" .. H.text(chat.transcript.buf) .. "\nprompts: " .. vim.inspect(H.prompts)
end
local function turn(text)
  chat:send(text)
  H.wait("the turn to end", function()
    return chat.session_id and not chat.turn_running and not chat.request_id
  end, 30000)
end

turn("make the file")
local asked = H.prompts[1]
H.eq("wave_trust", asked.kind, "the first prompt is the trust question")
H.eq({ "Trust", "Don't trust" }, asked.items, "choices")
H.contains(asked.prompt, "Trust " .. vim.fn.fnamemodify(root, ":~") .. "?", "prompt")
H.contains(asked.prompt, "sandbox", "prompt names what is held back")
H.contains(asked.prompt, ".wave/settings.json", "prompt names the file")
H.eq("wave_permission", H.prompts[2] and H.prompts[2].kind, "the command was asked about")
H.contains(H.prompts[2].prompt, "touch made.txt", "the command")
H.eq(0, vim.fn.filereadable("made.txt"), "the denied command did not run")

local text = H.text(chat.transcript.buf)
H.contains(text, "> Held back from " .. vim.fn.fnamemodify(root, ":~"), "the notice")
H.contains(text, "because you chose not to trust it", "why")
H.contains(text, "(.wave/settings.json)", "which file")
H.contains(text, ":WaveTrust", "how to lift it")
local _, notices = text:gsub("Held back from", "")
H.eq(1, notices, "one notice")

local health = report()
H.contains(health, "Workspace trust", "health section")
H.truthy(health:find("WARNING[^\n]*not trusted %(you chose not to trust it%)"), "a warning")
H.contains(health, ":WaveTrust to decide", "advice")

vim.cmd("WaveTrust")
H.wait("the notice to say it is trusted", function()
  return H.text(chat.transcript.buf):find("Trusted " .. vim.fn.fnamemodify(root, ":~"), 1, true)
end)
H.eq(3, #H.prompts, "asked again by :WaveTrust")
H.eq("wave_trust", H.prompts[3].kind, ":WaveTrust asks")
text = H.text(chat.transcript.buf)
H.truthy(not text:find("Held back from", 1, true), "the notice was updated in place")
H.contains(report(), "OK " .. root .. ": trusted", "health after trusting")

turn("make the file again")
H.eq(3, #H.prompts, "the trusted sandbox runs the command unasked")
H.eq(1, vim.fn.filereadable("made.txt"), "the command ran")

chat:new_session()
turn("hello")
H.eq(3, #H.prompts, "a new session of the folder is not asked again")
H.done()
