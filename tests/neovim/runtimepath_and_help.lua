-- Installed the way a plugin manager does it (the folder added to 'runtimepath' after
-- start-up, then setup()): the commands exist, every module loads, the help file has its
-- tags, and :checkhealth finds the plugin.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")
local plugin = assert(vim.env.WAVE_TEST_PLUGIN_DIR)

H.eq(0, vim.fn.exists(":WaveChat"), "no command before the plugin is added")
vim.opt.rtp:append(plugin)
require("wave").setup({ permission_mode = "nonsense" })
H.eq("default", require("wave.config").get().permission_mode, "a bad option falls back")
local commands = {
  "WaveChat", "WaveStop", "WaveSessions", "WaveMode", "WaveTasks", "WaveWorktrees", "WaveTrust",
  "WaveMcp",
}
for _, name in ipairs(commands) do
  H.eq(2, vim.fn.exists(":" .. name), name)
end
H.truthy(vim.fn.maparg("<Plug>(WaveChat)", "n") ~= "", "<Plug>(WaveChat)")

for _, file in ipairs(vim.fn.globpath(plugin .. "/lua", "**/*.lua", false, true)) do
  local module = file:sub(#plugin + 6, -5):gsub("/init$", ""):gsub("/", ".")
  local ok, err = pcall(require, module)
  -- The completion-plugin sources may only need their plugin when called.
  H.truthy(ok, "require " .. module .. ": " .. tostring(err))
end

-- The help file: tags are valid (helptags fails on duplicates) and reach the right places.
local docs = vim.fn.tempname()
vim.fn.mkdir(docs .. "/doc", "p")
vim.fn.writefile(vim.fn.readfile(plugin .. "/doc/wave.txt"), docs .. "/doc/wave.txt")
vim.cmd("helptags " .. docs .. "/doc")
vim.opt.rtp:append(docs)
local tags = {
  "wave",
  ":WaveChat",
  ":WaveSessions",
  "wave-config",
  "wave.setup()",
  "wave-completion",
  "wave-permissions",
  "wave-trust",
  ":WaveTrust",
  ":WaveMcp",
  "wave-mcp",
  "wave-health",
  "wave-statusline",
}
for _, tag in ipairs(tags) do
  vim.cmd("help " .. tag)
  H.eq("wave.txt", vim.fn.expand("%:t"), "help " .. tag)
  H.contains(vim.api.nvim_get_current_line(), "*" .. tag .. "*", "the tag's line")
  vim.cmd("helpclose")
end

vim.cmd("checkhealth wave")
H.contains(H.text(0), "wave-ls 0.1.0", "checkhealth found the plugin")
H.done()
