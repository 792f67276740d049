--- `:WaveSessions`: pick a saved session of the project and resume it in the chat.
local client = require("wave.client")
local render = require("wave.render")

local M = {}

--- One line per session: title, age, size, and whether it is live.
---@param session table
---@param current string? the chat's session
function M.format(session, current)
  local title = session.title ~= "" and session.title or "(no message yet)"
  local parts = {
    render.one_line(title, 60),
    render.ago(session.updatedAt or 0),
    ("%d messages"):format(session.messageCount or 0),
  }
  if session.sessionId == current then
    table.insert(parts, "current")
  elseif session.live then
    table.insert(parts, "live")
  end
  return table.concat(parts, " · ")
end

---@param chat wave.Chat
function M.pick(chat)
  client.with_client(chat.root, function(c)
    client.request(c, "wave/session/list", { cwd = chat.root }, function(result, err)
      if err then
        vim.notify("wave: could not list sessions: " .. err.message, vim.log.levels.ERROR)
        return
      end
      local sessions = (result or {}).sessions or {}
      if #sessions == 0 then
        vim.notify("wave: no saved sessions for " .. chat.root)
        return
      end
      vim.ui.select(sessions, {
        prompt = "Resume a Wave session:",
        kind = "wave_session",
        format_item = function(session)
          return M.format(session, chat.session_id)
        end,
      }, function(session)
        if session and session.sessionId ~= chat.session_id then
          chat:resume(session.sessionId)
        elseif session then
          chat:open()
        end
      end)
    end)
  end)
end

return M
