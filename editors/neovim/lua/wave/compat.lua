--- The few APIs that differ between Neovim 0.10 and 0.11+ (client calls became methods).
local M = {}

M.has_011 = vim.fn.has("nvim-0.11") == 1

---@return boolean success, integer? request_id
function M.request(client, method, params, handler, bufnr)
  if M.has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

---@return {err: table?, result: any}? response, string? error
function M.request_sync(client, method, params, timeout_ms, bufnr)
  if M.has_011 then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

function M.cancel_request(client, id)
  if M.has_011 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

--- Start (or reuse) a client without attaching it to a buffer.
---@return integer? client_id
function M.start_detached(config, reuse)
  if M.has_011 then
    return vim.lsp.start(config, { attach = false, reuse_client = reuse })
  end
  for _, client in ipairs(vim.lsp.get_clients({ name = config.name })) do
    if reuse(client, config) then
      return client.id
    end
  end
  return vim.lsp.start_client(config)
end

--- Length of a UTF-8 `text` in code units of `encoding` ("utf-8", "utf-16", "utf-32").
---@param text string
---@param encoding string
---@return integer
function M.code_units(text, encoding)
  if encoding == "utf-8" then
    return #text
  end
  local units = 0
  for i = 1, #text do
    local byte = text:byte(i)
    if byte < 0x80 or byte >= 0xC0 then -- the first byte of a character
      units = units + ((encoding == "utf-16" and byte >= 0xF0) and 2 or 1)
    end
  end
  return units
end

return M
