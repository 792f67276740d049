--- An agent's frontmatter `color` as a highlight group, for its mention (the `@agent` chip),
--- its completion item and its delegation block.
---
--- Claude Code's colours each get a group `WaveAgent<Colour>`, linked to the diagnostic
--- group of that colour where there is one (red, yellow, green, blue) and otherwise
--- defined with the colour itself; all `default`, so a colorscheme or the user can set them.
--- The colour of a mentioned agent comes from the completion answers (`data.color`).
local M = {}

M.COLORS = { "red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan" }

local LINKS = {
  red = "DiagnosticError",
  blue = "DiagnosticInfo",
  green = "DiagnosticOk",
  yellow = "DiagnosticWarn",
}

local OWN = {
  purple = { fg = "#b48ead", ctermfg = 5 },
  orange = { fg = "#e0883a", ctermfg = 208 },
  pink = { fg = "#f08fc0", ctermfg = 13 },
  cyan = { fg = "#56b6c2", ctermfg = 6 },
}

--- `WaveAgentCyan` for `cyan` (any case, spaces around ignored); nil for anything else.
---@param color any
---@return string?
function M.group(color)
  if type(color) ~= "string" then
    return nil
  end
  local name = vim.trim(color):lower()
  if not (LINKS[name] or OWN[name]) then
    return nil
  end
  return "WaveAgent" .. name:sub(1, 1):upper() .. name:sub(2)
end

--- Define the groups (`default`: an existing definition is kept).
function M.define()
  for _, color in ipairs(M.COLORS) do
    local group = M.group(color) --[[@as string]]
    if LINKS[color] then
      vim.api.nvim_set_hl(0, group, { link = LINKS[color], default = true })
    else
      vim.api.nvim_set_hl(0, group, vim.tbl_extend("force", OWN[color], { default = true }))
    end
  end
end

local known = {} ---@type table<string, string> the name a mention holds -> its colour

--- Remember the colours of the agent items of a completion answer (`[@agent:<name>]`).
---@param items table[] LSP CompletionItems
function M.learn(items)
  for _, item in ipairs(items or {}) do
    local name = type(item.insertText) == "string" and item.insertText:match("^%[@agent:(.+)%]$")
    if name then
      local color = type(item.data) == "table" and item.data.color or nil
      known[name] = type(color) == "string" and color ~= "" and color or nil
    end
  end
end

--- The colour of the agent a mention names, if a completion said it.
---@param name string
---@return string?
function M.of(name)
  return known[name]
end

return M
