-- wave.nvim: commands and autocommands only; everything else is required on first use.
if vim.g.loaded_wave then
  return
end
vim.g.loaded_wave = true

if vim.fn.has("nvim-0.10") == 0 then
  vim.notify("wave.nvim needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  return
end

require("wave.commands").register()
