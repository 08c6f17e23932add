import { createRequire } from "node:module";
import type * as BullMQ from "bullmq";

// The three BullMQ classes the scheduler uses, required from their own files
// instead of the package index. The index (bullmq 6) also loads the
// PostgreSQL backend and its SQL scripts at import, ~70 modules and ~1.2 MiB
// of heap that a Redis-only scheduler carries for its whole life. Same
// CommonJS module cache as `import ... from "bullmq"`, so the classes are
// identical (bullmq-classes.test.ts checks it, which also catches a BullMQ
// upgrade that moves these files). Types still come from "bullmq".
const require = createRequire(import.meta.url);

export const Queue: typeof BullMQ.Queue = require("bullmq/dist/cjs/classes/queue.js").Queue;
export const Worker: typeof BullMQ.Worker = require("bullmq/dist/cjs/classes/worker.js").Worker;
export const UnrecoverableError: typeof BullMQ.UnrecoverableError =
  require("bullmq/dist/cjs/classes/errors/unrecoverable-error.js").UnrecoverableError;
