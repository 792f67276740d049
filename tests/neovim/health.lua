-- :checkhealth wave: the server and its version, the endpoint, the subagents; problems in
-- agent files are warnings with their place.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

local function report()
  vim.cmd("checkhealth wave")
  local text = H.text(vim.api.nvim_get_current_buf())
  vim.cmd("bwipeout!")
  return text
end

local text = report()
H.extra_context = function()
  return text
end
H.contains(text, "wave-ls 0.1.0", "server version")
H.contains(text, "endpoint: " .. vim.env.OPENAI_BASE_URL .. " (OPENAI_BASE_URL)", "endpoint")
H.contains(text, "model: fake-model (WAVE_MODEL)", "model")
H.contains(text, "4 subagents loaded: Explore (builtin)", "agents")
H.contains(text, "reviewer (project)", "project agent")
H.contains(text, "no problems in agent files", "problems")
H.truthy(not text:find("WARNING", 1, true) and not text:find("ERROR", 1, true), "the check passes")

-- A broken agent file: a warning naming it, from the running server this time.
vim.cmd("WaveChat")
H.wait("the server", function()
  local client = H.client()
  return client and client.initialized
end)
vim.fn.writefile({ "---", "name: broken", "---", "no description" }, ".wave/agents/broken.md")
vim.cmd.wincmd("t")
text = report()
H.contains(text, "running for", "the running server")
H.truthy(text:find("WARNING[^\n]*broken%.md"), "a warning names the broken file")
H.done()
