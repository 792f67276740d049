-- :WaveMode sets the permission mode (before the session and then live); :WaveTasks lists
-- the background tasks and stops one.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

local answers = {}
H.script_select(function(prompt, items)
  local want = table.remove(answers, 1)
  for i, line in ipairs(prompt.items) do
    if line:find(want, 1, true) then
      return items[i]
    end
  end
  error("no item " .. want .. " in " .. vim.inspect(prompt))
end)

vim.cmd("WaveChat")
local chat = H.chat()
H.extra_context = function()
  return "transcript:\n" .. H.text(chat.transcript.buf) .. "\nprompts: " .. vim.inspect(H.prompts)
end
vim.cmd("WaveMode bypassPermissions")
H.eq("bypassPermissions", chat.mode, "mode before the session")

chat:send("start the watcher")
H.wait("the turn", function()
  return H.text(chat.transcript.buf):find("Watching.", 1, true) and not chat.request_id
end)
H.eq(0, #H.prompts, "no permission prompt in bypassPermissions")

answers = { "sleep 30", "Stop it" }
vim.cmd("WaveTasks")
H.wait("the task to stop", function()
  local listed = H.client():request_sync("wave/tasks/list", { sessionId = chat.session_id }, 2000)
  return listed.result.tasks[1].status == "stopped"
end)
local item = H.prompts[1].items[1]
H.truthy(item:find("^◐ running · bash%-%x+ · sleep 30"), "task item: " .. item)
H.eq({ "Stop it", "Keep it running" }, H.prompts[2].items, "confirmation")

-- Pick a mode: the live session is reconfigured.
answers = { "plan" }
vim.cmd("WaveMode")
H.wait("plan mode", function()
  return chat.mode == "plan"
end)
H.eq("wave_mode", H.prompts[3].kind, "mode picker")
H.contains(vim.wo[vim.fn.bufwinid(chat.transcript.buf)].winbar, "plan", "winbar")
H.done()
