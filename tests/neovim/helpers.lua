-- Helpers for the headless Neovim scenarios (run by tests/test_neovim_*.py with `nvim -l`).
-- A scenario fails by raising an error: nvim exits 1 and prints it on stderr.
local H = {}

H.timeout = tonumber(vim.env.WAVE_TEST_TIMEOUT_MS or "") or 15000

--- Wait until `predicate()` is true (the event loop runs meanwhile).
function H.wait(what, predicate, timeout)
  local ok = vim.wait(timeout or H.timeout, function()
    local good, value = pcall(predicate)
    return good and value
  end, 10)
  if not ok then
    error("timed out waiting for " .. what .. H.context(), 2)
  end
end

H.extra_context = nil

function H.context()
  return H.extra_context and ("\n" .. H.extra_context()) or ""
end

function H.eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(
      ("%s: expected %s, got %s%s"):format(
        what or "value",
        vim.inspect(expected),
        vim.inspect(actual),
        H.context()
      ),
      2
    )
  end
end

function H.truthy(value, what)
  if not value then
    error((what or "value") .. " is not true: " .. vim.inspect(value) .. H.context(), 2)
  end
  return value
end

function H.contains(haystack, needle, what)
  if type(haystack) ~= "string" or not haystack:find(needle, 1, true) then
    local message = ("%s: %s not found in:\n%s"):format(
      what or "text",
      vim.inspect(needle),
      tostring(haystack)
    )
    error(message .. H.context(), 2)
  end
end

H.PASSED = "WAVE-SCENARIO-PASSED"

--- The scenario's last line: the runner requires this (so an early exit cannot pass).
function H.done()
  io.stdout:write(H.PASSED .. "\n")
end

--- The buffer's lines as one text.
function H.text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

--- The wave client of the current directory (started by the plugin).
function H.client()
  return require("wave.client").get(require("wave.client").root(nil))
end

--- Answer `vim.ui.select` prompts from a script: `answers` maps a prompt's start (or
--- `kind`) to a function choosing from the items; every prompt is recorded in `H.prompts`.
H.prompts = {}
function H.script_select(answer)
  vim.ui.select = function(items, opts, on_choice)
    local shown = {}
    for _, item in ipairs(items) do
      table.insert(shown, opts.format_item and opts.format_item(item) or tostring(item))
    end
    local prompt = { prompt = opts.prompt, kind = opts.kind, items = shown }
    table.insert(H.prompts, prompt)
    local choice = answer(prompt, items)
    -- Answer later, as a real picker does.
    vim.defer_fn(function()
      on_choice(choice)
    end, 10)
  end
end

--- The (first) chat of the current project.
function H.chat()
  return require("wave.chat").current(false)
end

return H
