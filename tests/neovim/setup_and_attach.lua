-- setup() options reach the server; one client per project root, attached to agent files.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")
local other = assert(vim.env.WAVE_TEST_OTHER_PROJECT)

require("wave").setup({ permission_mode = "acceptEdits", model = "fake-model" })
H.truthy(vim.fn.exists(":WaveChat") == 2, ":WaveChat exists")

-- An ordinary file starts nothing.
vim.cmd.edit("src/app.py")
vim.wait(200)
H.eq({}, vim.lsp.get_clients({ name = "wave" }), "clients for a source file")

-- A project agent file attaches the server, rooted at the project.
vim.cmd.edit(".wave/agents/reviewer.md")
local buf = vim.api.nvim_get_current_buf()
H.wait("the server attached to the agent file", function()
  return #vim.lsp.get_clients({ bufnr = buf, name = "wave" }) == 1
end)
local client = vim.lsp.get_clients({ bufnr = buf, name = "wave" })[1]
H.wait("initialize", function()
  return client.initialized
end)
local root = vim.fs.normalize(vim.fn.getcwd())
H.eq(root, client.root_dir, "root")
H.eq("utf-8", client.offset_encoding, "negotiated position encoding")
local init_options = client.config.init_options
H.eq("acceptEdits", init_options.permissionMode, "initializationOptions.permissionMode")
H.eq("fake-model", init_options.model, "initializationOptions.model")
H.eq(nil, init_options.apiKey, "no key in initializationOptions")
H.eq(true, client.config.capabilities.experimental.wave.permissionRequest, "permission capability")
H.eq("wave-ls", client.server_info and client.server_info.name, "serverInfo.name")

-- :WaveChat reuses the project's client: a transcript (markdown) above an input.
vim.cmd.edit("src/app.py")
vim.cmd("WaveChat")
H.eq(1, #vim.lsp.get_clients({ name = "wave" }), "clients after :WaveChat")
local chat = H.chat()
H.eq(root, chat.root, "chat root")
H.eq("markdown", vim.bo[chat.transcript.buf].filetype, "transcript filetype")
H.eq(chat.input_buf, vim.api.nvim_get_current_buf(), "the cursor is in the input")
H.eq("wave_input", vim.bo[chat.input_buf].filetype, "input filetype")
local wins = vim.api.nvim_tabpage_list_wins(0)
H.eq(3, #wins, "windows: code, transcript, input")
local winbar = vim.wo[vim.fn.bufwinid(chat.transcript.buf)].winbar
H.truthy(winbar:find("acceptEdits", 1, true), "winbar shows the mode")

-- :WaveChat again focuses the same chat instead of opening more windows.
vim.cmd.wincmd("t")
vim.cmd("WaveChat")
H.eq(3, #vim.api.nvim_tabpage_list_wins(0), "windows after a second :WaveChat")
H.eq(chat.input_buf, vim.api.nvim_get_current_buf(), "focus back in the input")

-- A user-level agent file goes to the client of the current project.
vim.cmd.wincmd("t")
vim.cmd.edit(vim.fs.normalize("~/.wave/agents/mine.md"))
local user_buf = vim.api.nvim_get_current_buf()
H.wait("attached to the user agent file", function()
  return #vim.lsp.get_clients({ bufnr = user_buf, name = "wave" }) == 1
end)
H.eq(client.id, vim.lsp.get_clients({ bufnr = user_buf, name = "wave" })[1].id, "same client")

-- Another project gets its own client.
vim.cmd.edit(other .. "/.wave/agents/helper.md")
local other_buf = vim.api.nvim_get_current_buf()
H.wait("a second client", function()
  return #vim.lsp.get_clients({ name = "wave" }) == 2
end)
local second = vim.lsp.get_clients({ bufnr = other_buf, name = "wave" })[1]
H.eq(vim.fs.normalize(other), second.root_dir, "second root")

-- `q` closes the chat; in a tab of its own (chat.position = "tab") it closes that tab.
vim.cmd("only")
vim.cmd.edit(root .. "/src/app.py")
vim.cmd("WaveChat")
H.eq(3, #vim.api.nvim_tabpage_list_wins(0), "chat open")
vim.api.nvim_feedkeys("q", "tx", false)
H.eq(1, #vim.api.nvim_tabpage_list_wins(0), "closed with q")
require("wave").setup({ chat = { position = "tab" } })
vim.cmd("WaveChat")
H.eq(2, #vim.api.nvim_list_tabpages(), "a tab for the chat")
H.eq(2, #vim.api.nvim_tabpage_list_wins(0), "transcript and input in it")
vim.api.nvim_feedkeys("q", "tx", false)
H.eq(1, #vim.api.nvim_list_tabpages(), "the tab closed with q")
H.done()
