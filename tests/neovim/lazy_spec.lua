-- The documented lazy.nvim spec's effect and nothing else (issue 28 point 3): a `dir =` spec
-- with `lazy = false` puts the clone's editors/neovim on 'runtimepath' at start-up and
-- sources its plugin/ files; lazy.nvim runs no :helptags for a local folder. Then, before
-- any Wave command or setup(): `:help wave` opens the manual (from the committed doc/tags,
-- which must be what :helptags writes today) and `:checkhealth wave` finds the plugin.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")
local plugin = assert(vim.env.WAVE_TEST_PLUGIN_DIR)

vim.opt.rtp:append(plugin)
vim.cmd("runtime! plugin/wave.lua")
H.eq(2, vim.fn.exists(":WaveChat"), "the commands are defined")

local tags =
  { "wave", "wave-setup", "wave-statusline", "wave.statusline()", "wave-compact", ":WaveChat" }
for _, tag in ipairs(tags) do
  local ok, err = pcall(vim.cmd, "help " .. tag)
  H.truthy(ok, "help " .. tag .. ": " .. tostring(err))
  H.eq("wave.txt", vim.fn.expand("%:t"), "help " .. tag)
  H.contains(vim.api.nvim_get_current_line(), "*" .. tag .. "*", "the tag's line")
  vim.cmd("helpclose")
end

-- The committed tags are those :helptags makes from today's wave.txt.
local fresh = vim.fn.tempname()
vim.fn.mkdir(fresh, "p")
vim.fn.writefile(vim.fn.readfile(plugin .. "/doc/wave.txt"), fresh .. "/wave.txt")
vim.cmd("helptags " .. fresh)
H.eq(
  vim.fn.readfile(fresh .. "/tags"),
  vim.fn.readfile(plugin .. "/doc/tags"),
  "doc/tags is current (run :helptags editors/neovim/doc)"
)

vim.cmd("checkhealth wave")
local text = H.text(0)
H.extra_context = function()
  return text
end
H.contains(text, "wave-ls 0.1.0", "checkhealth found the plugin and the server")
H.eq(0, #vim.lsp.get_clients({ name = "wave" }), "no Wave command has run: no client")
H.done()
