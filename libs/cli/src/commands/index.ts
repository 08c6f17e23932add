import type { Command } from "commander";
import { register as agentCreate } from "./agent-create.js";
import { register as agentDelete } from "./agent-delete.js";
import { register as agentEdit } from "./agent-edit.js";
import { register as agentInfo } from "./agent-info.js";
import { register as agentList } from "./agent-list.js";
import { register as agentMemory } from "./agent-memory.js";
import { register as agentNotes } from "./agent-notes.js";
import { register as agentTodo } from "./agent-todo.js";
import { register as apply } from "./apply.js";
import { register as completion } from "./completion.js";
import { register as control } from "./control.js";
import { register as dlq } from "./dlq.js";
import { register as events } from "./events.js";
import { register as newAgent } from "./new.js";
import { register as pairing } from "./pairing.js";
import { register as schedule } from "./schedule.js";
import { register as send } from "./send.js";
import { register as stack } from "./stack.js";
import { register as status } from "./status.js";
import { register as thread } from "./thread.js";
import { register as ps } from "./workflow-ps.js";
import { register as run } from "./workflow-run.js";
import { register as start } from "./workflow-start.js";
import { register as stop } from "./workflow-stop.js";

/**
 * Every command, in the order `moniro --help` lists them. A command is one
 * file exporting `register(program)`; add it here (libs/cli/README.md).
 * The `agent …` files share one group (agent-group.ts).
 */
export const COMMANDS: ReadonlyArray<(program: Command) => void> = [
  stack,
  send,
  events,
  thread,
  status,
  control,
  agentList,
  agentInfo,
  agentCreate,
  agentEdit,
  agentDelete,
  agentMemory,
  agentNotes,
  agentTodo,
  newAgent,
  apply,
  schedule,
  dlq,
  run,
  start,
  stop,
  ps,
  pairing,
  completion,
];
