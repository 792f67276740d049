--- `:WaveTasks`: the session's background tasks; stop a running one, open an ended one's
--- output.
local client = require("wave.client")
local render = require("wave.render")

local M = {}

---@param task table as in `wave/tasks/list`
function M.format(task)
  local icon = render.icons[task.status] or "?"
  local what = task.kind == "shell" and (task.command or task.description or "")
    or ((task.subagentType or "agent") .. ": " .. (task.description or ""))
  local parts = { icon .. " " .. task.status, task.taskId, render.one_line(what, 60) }
  if task.progress and task.progress ~= "" and task.status == "running" then
    table.insert(parts, render.one_line(task.progress, 40))
  end
  return table.concat(parts, " · ")
end

local function stop(c, task)
  client.request(c, "wave/tasks/stop", { taskId = task.taskId }, function(result, err)
    if err then
      vim.notify("wave: " .. err.message, vim.log.levels.ERROR)
    elseif result and result.stopped then
      vim.notify("wave: stopped " .. task.taskId)
    else
      vim.notify("wave: " .. task.taskId .. " had already ended")
    end
  end)
end

local function act(c, task)
  if task.status == "running" then
    vim.ui.select({ "Stop it", "Keep it running" }, {
      prompt = "Stop " .. task.taskId .. "?",
      kind = "wave_confirm",
    }, function(choice)
      if choice == "Stop it" then
        stop(c, task)
      end
    end)
  elseif task.outputFile and vim.uv.fs_stat(task.outputFile) then
    vim.cmd("split " .. vim.fn.fnameescape(task.outputFile))
  else
    vim.notify(("wave: %s %s%s"):format(
      task.taskId,
      task.status,
      task.summary and (": " .. task.summary) or ""
    ))
  end
end

---@param chat wave.Chat
function M.pick(chat)
  if not chat.session_id then
    vim.notify("wave: no session yet: send a message first")
    return
  end
  client.with_client(chat.root, function(c)
    client.request(c, "wave/tasks/list", { sessionId = chat.session_id }, function(result, err)
      if err then
        vim.notify("wave: could not list tasks: " .. err.message, vim.log.levels.ERROR)
        return
      end
      local tasks = (result or {}).tasks or {}
      if #tasks == 0 then
        vim.notify("wave: no background tasks in this session")
        return
      end
      vim.ui.select(tasks, {
        prompt = "Background tasks:",
        kind = "wave_task",
        format_item = M.format,
      }, function(task)
        if task then
          act(c, task)
        end
      end)
    end)
  end)
end

return M
