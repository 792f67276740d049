--- Mention tags: `[@agent:<name>]` shown as a highlighted `@<name>`, `[@file:<path>]` as
--- `@<path>` (the tag stays in the text; extmarks conceal its brackets and prefix).
local M = {}

M.ns = vim.api.nvim_create_namespace("wave.mentions")

local PATTERNS = {
  { kind = "agent", pattern = "()%[@agent:([%a][%w_%-:]*)%]()" },
  { kind = "file", pattern = "()%[@file:([^%]]+)%]()" },
}

---@class wave.Mention
---@field kind "agent"|"file"
---@field name string
---@field start integer 0-based byte column of `[`
---@field finish integer 0-based byte column after `]`

--- Every tag in one line, left to right.
---@param line string
---@return wave.Mention[]
function M.find(line)
  local found = {}
  for _, spec in ipairs(PATTERNS) do
    for start, name, after in line:gmatch(spec.pattern) do
      table.insert(found, { kind = spec.kind, name = name, start = start - 1, finish = after - 1 })
    end
  end
  table.sort(found, function(a, b)
    return a.start < b.start
  end)
  return found
end

--- Decorate lines [first, last) of `buf` (all lines when omitted).
---@param buf integer
---@param first integer?
---@param last integer?
---@param conceal boolean?
function M.decorate(buf, first, last, conceal)
  first = first or 0
  last = last or vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_clear_namespace(buf, M.ns, first, last)
  local lines = vim.api.nvim_buf_get_lines(buf, first, last, false)
  for i, line in ipairs(lines) do
    local row = first + i - 1
    for _, mention in ipairs(M.find(line)) do
      local hl = mention.kind == "agent" and "WaveMentionAgent" or "WaveMentionFile"
      if mention.kind == "agent" then -- the agent's own colour, when it sets one
        local colors = require("wave.colors")
        hl = colors.group(colors.of(mention.name)) or hl
      end
      vim.api.nvim_buf_set_extmark(buf, M.ns, row, mention.start, {
        end_col = mention.finish,
        hl_group = hl,
        priority = 200,
      })
      if conceal ~= false then
        local prefix = #("[@" .. mention.kind .. ":")
        -- `[` hidden, `@` kept, `agent:` hidden, the name kept, `]` hidden.
        for _, range in ipairs({
          { mention.start, mention.start + 1 },
          { mention.start + 2, mention.start + prefix },
          { mention.finish - 1, mention.finish },
        }) do
          vim.api.nvim_buf_set_extmark(buf, M.ns, row, range[1], {
            end_col = range[2],
            conceal = "",
            priority = 200,
          })
        end
      end
    end
  end
end

--- The tag that ends right before byte column `col` of `line`, for an atomic backspace.
---@return wave.Mention?
function M.ending_at(line, col)
  for _, mention in ipairs(M.find(line)) do
    if mention.finish == col then
      return mention
    end
  end
end

return M
