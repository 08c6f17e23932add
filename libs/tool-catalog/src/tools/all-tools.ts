import type { ToolDefinition } from "../tool.js";
import { historyReadTool, historySearchTool } from "./context/history.js";
import { memoryDeleteTool, memoryGetTool, memorySearchTool, memoryWriteTool } from "./context/memory.js";
import { noteReadTool, noteWriteTool } from "./context/notes.js";
import { todoAddTool, todoDoneTool, todoListTool } from "./context/todos.js";
import { cronTool } from "./cron.js";
import { execTool } from "./exec.js";
import { applyPatchTool } from "./files/apply-patch.js";
import { editTool } from "./files/edit.js";
import { globTool } from "./files/glob.js";
import { grepTool } from "./files/grep.js";
import { lsTool } from "./files/ls.js";
import { readTool } from "./files/read.js";
import { writeTool } from "./files/write.js";
import { messageTool } from "./message.js";
import { processTool } from "./process.js";
import { channelReadTool, channelSendTool } from "./team/channel.js";
import { teamDocListTool, teamDocReadTool, teamDocWriteTool } from "./team/documents.js";
import { inboxAckTool, inboxTool } from "./team/inbox.js";
import { teamMembersTool } from "./team/members.js";
import { teamProposalCreateTool, teamProposalStatusTool, teamProposalVoteTool } from "./team/proposals.js";

/** Every catalog tool, in the order the model sees them. */
export const catalogTools: readonly ToolDefinition[] = [
  messageTool,
  readTool,
  writeTool,
  editTool,
  applyPatchTool,
  grepTool,
  globTool,
  lsTool,
  execTool,
  processTool,
  memoryWriteTool,
  memoryGetTool,
  memorySearchTool,
  memoryDeleteTool,
  noteWriteTool,
  noteReadTool,
  todoAddTool,
  todoListTool,
  todoDoneTool,
  historySearchTool,
  historyReadTool,
  cronTool,
  channelSendTool,
  channelReadTool,
  inboxTool,
  inboxAckTool,
  teamMembersTool,
  teamDocListTool,
  teamDocReadTool,
  teamDocWriteTool,
  teamProposalCreateTool,
  teamProposalVoteTool,
  teamProposalStatusTool,
];
