--- nvim-cmp source for the chat input: `@` subagents and files from the server.
local completion = require("wave.completion")

local source = {}

function source.new()
  return setmetatable({}, { __index = source })
end

function source:get_debug_name()
  return "wave"
end

function source:is_available()
  return vim.bo.filetype == "wave_input"
end

function source:get_trigger_characters()
  return { "@" }
end

function source:get_keyword_pattern()
  return [[@\S*]]
end

function source:get_position_encoding_kind()
  return "utf-8"
end

function source:complete(params, callback)
  local context = params.context
  local row, col = context.cursor.row, context.cursor.col - 1
  local line = context.cursor_line
  local start = completion.at_word(line, col)
  if not start then
    callback({ items = {}, isIncomplete = false })
    return
  end
  completion.request(context.bufnr, row, line:sub(1, col), line:sub(col + 1), function(items)
    local range = {
      start = { line = row - 1, character = start },
      ["end"] = { line = row - 1, character = col },
    }
    for _, item in ipairs(items) do
      item.textEdit = { newText = item.insertText or item.label, range = range }
      item.filterText = "@" .. item.label
    end
    callback({ items = items, isIncomplete = true })
  end)
end

return source
