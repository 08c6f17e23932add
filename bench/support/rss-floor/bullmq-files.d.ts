// The BullMQ class files the scheduler's floor imports, typed as the package index's classes.
declare module "bullmq/dist/cjs/classes/queue.js" {
  export { Queue } from "bullmq";
}
declare module "bullmq/dist/cjs/classes/worker.js" {
  export { Worker } from "bullmq";
}
