-- A chat turn that delegates to Explore: the answer streams into the transcript, the Agent
-- block shows the subagent's type, task, latest tool and tokens (from $/progress), then its
-- summary; vim.lsp.status() carries the progress for a statusline.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("WaveChat")
local chat = H.chat()
local transcript = chat.transcript.buf
H.extra_context = function()
  return "transcript:\n" .. H.text(transcript)
end

-- Every state the transcript went through, and the progress Neovim received.
local snapshots, progress, statuses = {}, {}, {}
vim.api.nvim_buf_attach(transcript, false, {
  on_lines = function()
    vim.schedule(function()
      table.insert(snapshots, H.text(transcript))
    end)
  end,
})
vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(ev)
    table.insert(progress, ev.data.params)
    table.insert(statuses, vim.lsp.status())
  end,
})

-- Write the message and send it with <CR> in Normal mode.
vim.api.nvim_feedkeys(vim.keycode("iwhere are the tests?<Esc><CR>"), "tx", false)
H.eq({ "" }, vim.api.nvim_buf_get_lines(chat.input_buf, 0, -1, false), "input after sending")
H.wait("the turn to end", function()
  return chat.session_id and not chat.turn_running and not chat.request_id
end, 30000)

local text = H.text(transcript)
H.contains(text, "## You\n\nwhere are the tests?", "user message")
H.contains(text, "## Wave", "assistant header")
H.contains(text, "I'll ask Explore to look.", "first round")
H.contains(text, "> ✓ Explore · Find the tests\n", "the Agent block, completed")
H.contains(text, "> Task: Find the test files for app.py", "its task")
H.truthy(text:find("> Done %(1 tool call · [%d,]+ tokens · [%d.]+s%)"), "its summary")
H.contains(text, "> ↳ Found tests/test_app.py with test_answer.", "its answer")
H.contains(text, "The tests are in tests/test_app.py; test_answer checks answer().", "final answer")

-- Streamed: the final answer was seen part-written before it was whole.
local partial = false
for _, snapshot in ipairs(snapshots) do
  local started = snapshot:find("The tests are in", 1, true)
  if started and not snapshot:find("checks answer().", 1, true) then
    partial = true
  end
end
H.truthy(partial, "the answer streamed")

-- The block showed the subagent's latest tool and tokens while it ran.
local running = false
for _, snapshot in ipairs(snapshots) do
  if snapshot:find("> ◐ Explore · Find the tests", 1, true)
    and snapshot:find("> Grep def test · [%d,]+ tokens")
  then
    running = true
  end
end
H.truthy(running, "a running block with the latest tool:\n" .. table.concat(snapshots, "\n-----\n"))

-- $/progress reached Neovim (and vim.lsp.status()).
local kinds, titles = {}, {}
for _, params in ipairs(progress) do
  kinds[params.value.kind] = true
  if params.value.kind == "begin" then
    table.insert(titles, params.value.title)
  end
  H.truthy(params.token:match("^wave/agent/"), "progress token")
end
local all = kinds.begin and kinds.report and kinds["end"]
H.truthy(all, "begin, report and end: " .. vim.inspect(progress))
H.eq({ "Explore: Find the tests" }, titles, "progress title")
local shown = false
for _, status in ipairs(statuses) do
  shown = shown or status:find("Explore", 1, true) ~= nil
end
H.truthy(shown, "vim.lsp.status(): " .. vim.inspect(statuses))
H.done()
