export { type ChildHandle, type ExitStatus, type Spawner, spawnChild } from "./child-handle.js";
export { stackOptions } from "./cli-options.js";
export { askAgent } from "./conversation.js";
export { EventPrinter } from "./event-printer.js";
export { findExecutable, InfraError, installInstructions, planServers } from "./infra.js";
export { formatLogLine, LineSplitter } from "./log-format.js";
export { type RunningStack, startStack } from "./stack.js";
export { planService, STACK_SERVICES, type StackOptions, type StackService } from "./stack-plan.js";
export { Supervisor } from "./supervisor.js";
