--- blink.cmp source for the chat input: `@` subagents and files from the server.
local completion = require("wave.completion")

local source = {}

function source.new()
  return setmetatable({}, { __index = source })
end

function source:enabled()
  return vim.bo.filetype == "wave_input"
end

function source:get_trigger_characters()
  return { "@" }
end

function source:get_completions(context, callback)
  local row, col = context.cursor[1], context.cursor[2]
  local line = context.line
  local start = completion.at_word(line, col)
  if not start then
    callback({ items = {}, is_incomplete_forward = false, is_incomplete_backward = false })
    return
  end
  return completion.request(context.bufnr, row, line:sub(1, col), line:sub(col + 1), function(items)
    local range = {
      start = { line = row - 1, character = start },
      ["end"] = { line = row - 1, character = col },
    }
    for _, item in ipairs(items) do
      item.textEdit = { newText = item.insertText or item.label, range = range }
      item.filterText = "@" .. item.label
      item.insertText = nil
    end
    callback({ items = items, is_incomplete_forward = true, is_incomplete_backward = true })
  end)
end

return source
