// Types of the BullMQ class files bullmq-classes.ts imports (the package ships
// its declarations beside its ES module build only): those of the package index.
declare module "bullmq/dist/cjs/classes/queue.js" {
  export { Queue } from "bullmq";
}
declare module "bullmq/dist/cjs/classes/worker.js" {
  export { Worker } from "bullmq";
}
declare module "bullmq/dist/cjs/classes/errors/unrecoverable-error.js" {
  export { UnrecoverableError } from "bullmq";
}
