-- wave/permission/request answered through a scripted vim.ui.select: the diff is shown in a
-- floating window while asked; "Allow for this session" covers the next edit of the file;
-- "Deny" reaches the model; the transcript says what was decided.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

local floats = {} -- what the floating windows showed while each prompt was open
H.script_select(function(prompt)
  local shown = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      local buf = vim.api.nvim_win_get_buf(win)
      table.insert(shown, { filetype = vim.bo[buf].filetype, text = H.text(buf) })
    end
  end
  table.insert(floats, shown)
  if prompt.prompt:find("Bash", 1, true) then
    return "Deny"
  end
  return "Allow for this session"
end)

vim.cmd("WaveChat")
local chat = H.chat()
H.eq("default", chat.mode, "mode")
H.extra_context = function()
  return "transcript:\n" .. H.text(chat.transcript.buf) .. "\nprompts: " .. vim.inspect(H.prompts)
end
chat:send("fix the answer")
H.wait("the turn to end", function()
  return chat.session_id and not chat.turn_running and not chat.request_id
end, 30000)

H.eq(2, #H.prompts, "prompts (the second edit of the file was allowed for the session)")
H.eq("wave_permission", H.prompts[1].kind, "kind")
H.eq({ "Allow", "Allow for this session", "Deny" }, H.prompts[1].items, "choices")
H.contains(H.prompts[1].prompt, "Edit", "first prompt")
H.contains(H.prompts[1].prompt, "app.py", "first prompt")
H.contains(H.prompts[2].prompt, "Bash: touch made.txt", "second prompt")

H.eq(1, #floats[1], "one float for the edit")
H.eq("diff", floats[1][1].filetype, "the preview is a diff")
H.contains(floats[1][1].text, "-    return 41", "preview")
H.contains(floats[1][1].text, "+    return 42", "preview")
H.contains(floats[1][1].text, "@@", "preview hunk")
H.eq("sh", floats[2][1] and floats[2][1].filetype, "the command is shown for Bash")
for _, win in ipairs(vim.api.nvim_list_wins()) do
  H.eq("", vim.api.nvim_win_get_config(win).relative, "no float left open")
end

local edited = vim.fn.readfile("src/app.py")
H.eq({ "def answer_value():", "    return 42" }, edited, "the edits were made")
H.eq(0, vim.fn.filereadable("made.txt"), "the denied command did not run")
local text = H.text(chat.transcript.buf)
H.contains(text, "> Allowed for this session: Edit", "notice")
H.truthy(text:find("✓ Edit  Edited [^\n]* · [^\n]*session"), "the second edit shows its allowance")
H.contains(text, "> Denied: Bash: touch made.txt", "notice")
H.contains(text, "✗ Bash", "the denied call failed")
H.contains(text, "I could not run it.", "answer")
H.done()
