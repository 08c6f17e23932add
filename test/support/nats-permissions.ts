import { createSubjects } from "@moniro/envelopes";

/** The nats-server environment variable holding `user`'s password (`AGENT_RUNNER_PASSWORD`). */
export function passwordVariable(user: NatsUser): string {
  return `${user.toUpperCase().replace(/-/g, "_")}_PASSWORD`;
}

/** The services that log in to NATS, each as its own user. */
export const NATS_USERS = ["gateway", "agent-runner", "tool-executor", "scheduler", "signal-bridge"] as const;
export type NatsUser = (typeof NATS_USERS)[number];

/**
 * The `authorization` block of a nats-server (2.9.10) config giving each
 * service only the subjects it uses in `namespace` (docs/integration.md,
 * "NATS users and permissions"). Every service may look up and create the
 * namespace's streams and read replies on `_INBOX.>`; only the gateway may
 * change stream limits or open SSE consumers, only the agent-runner consumes
 * MONIRO_IN, and nobody but the producers of inbound envelopes (gateway,
 * scheduler, signal-bridge) may publish on `<ns>.in.>`. Passwords are the
 * server's environment variables `passwordVariable(user)` (`$GATEWAY_PASSWORD`…).
 */
export function natsAuthorization(namespace: string): string {
  const s = createSubjects(namespace);
  const { in: IN, out: OUT, dlq: DLQ } = s.streams;
  const api = "$JS.API";
  const streams = [IN, OUT, DLQ].flatMap((name) => [`${api}.STREAM.INFO.${name}`, `${api}.STREAM.CREATE.${name}`]);
  const common = [`${api}.INFO`, ...streams];
  const ns = s.namespace;
  const publish: Record<NatsUser, string[]> = {
    gateway: [
      `${ns}.in.*`,
      `${ns}.ctl.*`,
      `${api}.STREAM.UPDATE.${OUT}`,
      `${api}.STREAM.UPDATE.${DLQ}`,
      // SSE: one ephemeral consumer per connection, deleted on close; /metrics lists the bridges' consumers.
      `${api}.CONSUMER.CREATE.${OUT}`,
      `${api}.CONSUMER.CREATE.${OUT}.>`,
      `${api}.CONSUMER.INFO.${OUT}.*`,
      `${api}.CONSUMER.DELETE.${OUT}.*`,
      `${api}.CONSUMER.MSG.NEXT.${OUT}.*`,
      `${api}.CONSUMER.LIST.${OUT}`,
    ],
    "agent-runner": [
      `${ns}.out.>`,
      `${ns}.evt.>`,
      `${ns}.tool.>`,
      `${ns}.runner.input.*`,
      `${ns}.dlq.in`,
      `${api}.CONSUMER.CREATE.${IN}.agent-runner`,
      `${api}.CONSUMER.CREATE.${IN}.agent-runner.>`,
      `${api}.CONSUMER.DURABLE.CREATE.${IN}.agent-runner`,
      `${api}.CONSUMER.INFO.${IN}.agent-runner`,
      `${api}.CONSUMER.MSG.NEXT.${IN}.agent-runner`,
      `$JS.ACK.${IN}.agent-runner.>`,
      "_INBOX.>",
    ],
    "tool-executor": [
      `${ns}.out.>`,
      `${ns}.sched.*`,
      `${ns}.tool.proc.*`,
      `${ns}.dlq.tool`,
      `${api}.CONSUMER.INFO.${OUT}.*`,
      "_INBOX.>",
    ],
    scheduler: [`${ns}.in.*`, `${ns}.dlq.sched`, "_INBOX.>"],
    "signal-bridge": [`${ns}.in.*`, `${api}.CONSUMER.INFO.${OUT}.outbound-signal`],
  };
  const subscribe: Record<NatsUser, string[]> = {
    gateway: [`${ns}.evt.*.*`],
    "agent-runner": [`${ns}.ctl.*`, `${ns}.runner.input.*`],
    "tool-executor": [`${ns}.tool.>`],
    scheduler: [`${ns}.sched.*`],
    "signal-bridge": [],
  };
  const list = (subjects: string[]) => `[${subjects.map((subject) => JSON.stringify(subject)).join(", ")}]`;
  const users = NATS_USERS.map(
    (user) => `    {
      user: ${JSON.stringify(user)}, password: $${passwordVariable(user)}
      permissions: {
        publish: { allow: ${list([...common, ...publish[user]])} }
        subscribe: { allow: ${list(["_INBOX.>", ...subscribe[user]])} }
      }
    }`,
  );
  return `authorization {\n  users = [\n${users.join("\n")}\n  ]\n}`;
}
