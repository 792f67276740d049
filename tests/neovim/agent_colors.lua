-- An agent's `color` (issue 24): its @ completion item and its mention in the input take
-- the colour's highlight group (from the real server's `data.color`); its delegation block
-- gets a dot and a bar of that colour, and a note line when it hit its turn limit or a
-- model tier was mapped.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")
local colors = require("wave.colors")
local render = require("wave.render")

vim.cmd("WaveChat")
local chat = H.chat()

-- The groups: linked to the diagnostic colours, or defined with the colour itself.
H.eq("DiagnosticError", vim.api.nvim_get_hl(0, { name = "WaveAgentRed" }).link, "red")
H.eq("DiagnosticWarn", vim.api.nvim_get_hl(0, { name = "WaveAgentYellow" }).link, "yellow")
for _, color in ipairs(colors.COLORS) do
  local group = H.truthy(colors.group(color), color)
  local hl = vim.api.nvim_get_hl(0, { name = group, link = false })
  H.truthy(hl.fg ~= nil, group .. " has a colour: " .. vim.inspect(hl))
end
H.eq("WaveAgentCyan", colors.group(" Cyan "), "any case")
H.eq(nil, colors.group("chartreuse"), "not a colour")

-- The block, pure.
local block = render.agent({
  status = "completed",
  subagentType = "painter",
  color = "cyan",
  maxTurnsReached = true,
  modelNote = "sonnet -> inherit: no model set for this tier",
  summary = "Done",
})
H.eq("> ✓ ● painter", block.lines[1], "title with the dot")
H.eq("> hit its turn limit · sonnet -> inherit: no model set for this tier", block.lines[3], "notes")
local dot, bars = false, 0
for _, mark in ipairs(block.marks) do
  local row, col, end_col, hl = unpack(mark)
  if hl == "WaveAgentCyan" and row == 0 and block.lines[1]:sub(col + 1, end_col) == "●" then
    dot = true
  elseif hl == "WaveAgentCyan" and col == 0 and end_col == 1 then
    bars = bars + 1
  end
end
H.truthy(dot, "the dot is cyan: " .. vim.inspect(block.marks))
H.eq(#block.lines - 1, bars, "a cyan bar on every line")
local plain = render.agent({ status = "running", subagentType = "Explore" })
H.eq("> ◐ Explore", plain.lines[1], "no colour, no dot")
H.eq({}, render.agent_notes({ maxTurnsReached = false }), "no notes")

-- The server's completion item carries the colour; the menu item and the mention show it.
H.wait("the server", function()
  local client = H.client()
  return client and client.initialized
end)
local input = chat.input_buf
local items = require("wave.completion").request_sync(input, 1, "ask @pain", "")
local painter = H.truthy(items[1], "an item")
H.eq("painter", painter.label, "the painter first")
H.eq("cyan", painter.data.color, "its colour")
local item = require("wave.completion").vim_item(painter)
H.truthy(item.info:find("painter.md", 1, true), "its file in the item's info")
H.eq("WaveAgentCyan", item.abbr_hlgroup, "the menu item's colour")
vim.api.nvim_buf_set_lines(input, 0, -1, false, { "ask [@agent:painter] and [@agent:Explore]" })
require("wave.mentions").decorate(input)
local groups = {}
for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(input, require("wave.mentions").ns, 0, -1, { details = true })) do
  if mark[4].hl_group then
    table.insert(groups, mark[4].hl_group)
  end
end
H.eq({ "WaveAgentCyan", "WaveMentionAgent" }, groups, "the mentions' highlights")

-- The live block in the transcript, from a toolBlock update's details.
chat.transcript:on_update({
  kind = "toolBlock",
  toolCallId = "call-1",
  name = "Agent",
  arguments = vim.json.encode({ subagent_type = "painter", description = "Paint it" }),
  status = "completed",
  shortResult = "Done",
  details = { subagentType = "painter", color = "cyan", maxTurnsReached = true, modelNote = "opus -> big (env: WAVE_MODEL_OPUS)" },
})
local text = H.text(chat.transcript.buf)
H.contains(text, "> ✓ ● painter · Paint it", "the block's title")
H.contains(text, "> hit its turn limit · opus -> big (env: WAVE_MODEL_OPUS)", "the block's notes")
H.done()
