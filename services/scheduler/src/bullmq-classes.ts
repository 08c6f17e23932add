// The three BullMQ classes the scheduler uses, imported from their own files
// instead of the package index. The index (bullmq 6) also loads the
// PostgreSQL backend and its SQL scripts at import, ~70 modules and ~1.2 MiB
// of heap that a Redis-only scheduler carries for its whole life. Node loads
// these CommonJS files through the same module cache as `import ... from
// "bullmq"`, so the classes are identical (bullmq-classes.test.ts checks it,
// which also catches a BullMQ upgrade that moves these files). Static imports,
// so the service's bundle (services/bundle.mjs) packs them, and the ioredis
// they use, with the rest of the scheduler. Their types are the package
// index's (bullmq-files.d.ts).
export { UnrecoverableError } from "bullmq/dist/cjs/classes/errors/unrecoverable-error.js";
export { Queue } from "bullmq/dist/cjs/classes/queue.js";
export { Worker } from "bullmq/dist/cjs/classes/worker.js";
