import { createSubjects } from "@moniro/envelopes";

/**
 * The environment variable holding `user`'s NATS password (`MONIRO_NATS_PASSWORD_AGENT_RUNNER`):
 * nats-server reads it in the configuration below; a deployment hands the same value to that
 * service as its `MONIRO_NATS_PASSWORD`.
 */
export function passwordVariable(user: NatsUser): string {
  return `MONIRO_NATS_PASSWORD_${user.toUpperCase().replace(/-/g, "_")}`;
}

/** The services that log in to NATS, each as its own user (named as the service). */
export const NATS_USERS = ["gateway", "agent-runner", "tool-executor", "scheduler", "signal-bridge"] as const;
export type NatsUser = (typeof NATS_USERS)[number];

/**
 * What a reader of one KV bucket publishes: open (create) and read its stream, get keys, watch
 * (an ordered consumer and its flow control). A writer also publishes on `$KV.<bucket>.>`.
 */
function kvBucket(bucket: string, access: "read" | "write"): string[] {
  const api = "$JS.API";
  const stream = `KV_${bucket}`;
  return [
    `${api}.STREAM.INFO.${stream}`,
    `${api}.STREAM.CREATE.${stream}`,
    `${api}.STREAM.MSG.GET.${stream}`,
    `${api}.DIRECT.GET.${stream}.>`,
    `${api}.CONSUMER.CREATE.${stream}`,
    `${api}.CONSUMER.CREATE.${stream}.>`,
    `${api}.CONSUMER.INFO.${stream}.*`,
    `${api}.CONSUMER.DELETE.${stream}.>`,
    ...(access === "write" ? [`$KV.${bucket}.>`] : []),
    `$JS.FC.${stream}.>`,
  ];
}

/**
 * The `authorization` block of a nats-server (2.9.10) config giving each
 * service only the subjects it uses in `namespace` (docs/integration.md,
 * "NATS users and permissions"). Every service may look up and create the
 * namespace's streams and read replies on `_INBOX.>`; only the gateway may
 * change stream limits or open SSE consumers, only the agent-runner consumes
 * MONIRO_IN, and nobody but the producers of inbound envelopes (gateway,
 * scheduler, signal-bridge, and the tool-executor for the inputs its team
 * tools push: @mentions and votes) may publish on `<ns>.in.*`. Passwords are the
 * server's environment variables `passwordVariable(user)` (`$MONIRO_NATS_PASSWORD_GATEWAY`…).
 */
export function natsAuthorization(namespace: string): string {
  const s = createSubjects(namespace);
  const { in: IN, out: OUT, dlq: DLQ } = s.streams;
  const api = "$JS.API";
  const streams = [IN, OUT, DLQ].flatMap((name) => [`${api}.STREAM.INFO.${name}`, `${api}.STREAM.CREATE.${name}`]);
  const common = [`${api}.INFO`, ...streams];
  const ns = s.namespace;
  // The agent registry (docs/registry.md): the gateway writes it, the runner, executor and scheduler watch it.
  const registry = (access: "read" | "write") => [
    ...kvBucket(`${ns}_agents`, access),
    ...kvBucket(`${ns}_agents_ephemeral`, access),
  ];
  const publish: Record<NatsUser, string[]> = {
    gateway: [
      ...registry("write"),
      `${ns}.in.*`,
      // Replaying an outbound DLQ record (`POST /v1/dlq/:seq/replay`).
      `${ns}.out.>`,
      `${ns}.ctl.*`,
      // The schedule routes, and /v1/status's probe of the scheduler.
      `${ns}.sched.*`,
      // /v1/status's probes of the runners and the tool-executors (a request nobody answers).
      `${ns}.runner.input.*`,
      `${ns}.tool.cancel.*`,
      `${ns}.signal.pairing`,
      // Workflow instances' shared directories and setup steps, on the tool-executors.
      `${ns}.ws.files`,
      // What was queued for a workflow's inline agent when its instance stopped.
      `${ns}.dlq.in`,
      // Refused `<ns>.wf.*` requests.
      `${ns}.dlq.wf`,
      `${api}.STREAM.UPDATE.${OUT}`,
      `${api}.STREAM.UPDATE.${DLQ}`,
      // SSE: one ephemeral consumer per connection, deleted on close; /metrics lists the bridges' consumers.
      `${api}.CONSUMER.CREATE.${OUT}`,
      `${api}.CONSUMER.CREATE.${OUT}.>`,
      `${api}.CONSUMER.INFO.${OUT}.*`,
      `${api}.CONSUMER.DELETE.${OUT}.*`,
      `${api}.CONSUMER.MSG.NEXT.${OUT}.*`,
      `${api}.CONSUMER.LIST.${OUT}`,
      // /v1/dlq: an ephemeral consumer per listing, one record by number, a record removed.
      `${api}.CONSUMER.CREATE.${DLQ}`,
      `${api}.CONSUMER.CREATE.${DLQ}.>`,
      `${api}.CONSUMER.INFO.${DLQ}.*`,
      `${api}.CONSUMER.DELETE.${DLQ}.*`,
      `${api}.CONSUMER.MSG.NEXT.${DLQ}.*`,
      `${api}.STREAM.MSG.GET.${DLQ}`,
      `${api}.STREAM.MSG.DELETE.${DLQ}`,
      // Replies to workflow requests (`<ns>.wf.*`).
      "_INBOX.>",
    ],
    "agent-runner": [
      // Sub-agents: a task, a report, a message between parent and child is an input to the other.
      `${ns}.in.*`,
      `${ns}.out.>`,
      `${ns}.evt.>`,
      `${ns}.tool.>`,
      `${ns}.runner.input.*`,
      // Canceling a sub-agent (its control subject).
      `${ns}.ctl.*`,
      `${ns}.dlq.in`,
      // Refused control requests.
      `${ns}.dlq.ctl`,
      `${api}.CONSUMER.CREATE.${IN}.agent-runner`,
      `${api}.CONSUMER.CREATE.${IN}.agent-runner.>`,
      `${api}.CONSUMER.DURABLE.CREATE.${IN}.agent-runner`,
      `${api}.CONSUMER.INFO.${IN}.agent-runner`,
      `${api}.CONSUMER.MSG.NEXT.${IN}.agent-runner`,
      `$JS.ACK.${IN}.agent-runner.>`,
      // The `message` tool runs in the runner: it looks up the bridges' `outbound-*` consumers (docs/tool-executor.md).
      `${api}.CONSUMER.INFO.${OUT}.*`,
      "_INBOX.>",
      ...registry("read"),
    ],
    "tool-executor": [
      // Team tools: an @mention or a vote is an input to the member (docs/security.md, "Workspaces").
      `${ns}.in.*`,
      `${ns}.out.>`,
      `${ns}.sched.*`,
      `${ns}.tool.proc.*`,
      // A stopped workflow instance's processes, on each executor that started one (docs/tool-executor.md).
      `${ns}.tool.procstop.*`,
      // Free-slot handoff between executors (docs/tool-executor.md).
      `${ns}.tool.handoff.*`,
      `${ns}.tool.slots.freed`,
      `${ns}.dlq.tool`,
      `${api}.CONSUMER.INFO.${OUT}.*`,
      "_INBOX.>",
      ...registry("read"),
    ],
    scheduler: [`${ns}.in.*`, `${ns}.dlq.sched`, "_INBOX.>", ...registry("read")],
    "signal-bridge": [
      `${ns}.in.*`,
      `${ns}.dlq.signal`,
      // Replies to pairing requests.
      "_INBOX.>",
      `${api}.CONSUMER.INFO.${OUT}.outbound-signal`,
      `${api}.CONSUMER.CREATE.${OUT}.outbound-signal`,
      `${api}.CONSUMER.CREATE.${OUT}.outbound-signal.>`,
      `${api}.CONSUMER.DURABLE.CREATE.${OUT}.outbound-signal`,
      `${api}.CONSUMER.MSG.NEXT.${OUT}.outbound-signal`,
      `$JS.ACK.${OUT}.outbound-signal.>`,
      // Pairing state: its KV bucket (docs/signal.md).
      ...kvBucket(`${ns}_signal_pairing`, "write"),
    ],
  };
  const subscribe: Record<NatsUser, string[]> = {
    gateway: [`${ns}.evt.*.*`, `${ns}.wf.*`],
    "agent-runner": [`${ns}.ctl.*`, `${ns}.runner.input.*`],
    "tool-executor": [`${ns}.tool.>`, `${ns}.ws.files`],
    scheduler: [`${ns}.sched.*`],
    "signal-bridge": [
      `${ns}.signal.pairing`,
      `${ns}.evt.*.input-injected`,
      `${ns}.evt.*.message-sent`,
      `${ns}.evt.*.cycle-ended`,
    ],
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

/**
 * A whole nats-server configuration for one Moniro deployment: the client port, monitoring
 * (healthchecks; not to be published), JetStream on `/data`, and `natsAuthorization(namespace)`.
 * `header`: comment lines that open the file.
 */
export function natsServerConfig(namespace: string, header: readonly string[]): string {
  return [
    ...header.map((line) => `# ${line}`.trimEnd()),
    "port: 4222",
    "http_port: 8222",
    "jetstream {",
    '  store_dir: "/data"',
    "}",
    natsAuthorization(namespace),
    "",
  ].join("\n");
}

/** The files a deployment ships this configuration in, each as it must read (`npm run nats-config` writes them). */
export function natsConfigFiles(): Record<string, string> {
  const why = [
    "Generated by `npm run nats-config` from libs/bus/src/nats-permissions.ts: do not edit.",
    "Each service logs in as its own user with only the subjects it uses (docs/security.md);",
    "the passwords come from the environment (MONIRO_NATS_PASSWORD_<SERVICE>), never written here.",
    "NATS parses a variable's value, so a password must start with a letter.",
  ];
  return {
    "docs/examples/nats-authorization.conf": `${natsAuthorization("moniro")}\n`,
    "deploy/compose/nats.conf": natsServerConfig("moniro", [`NATS for docker-compose.yml. ${why[0]}`, ...why.slice(1)]),
    "k8s/nats.conf": natsServerConfig("moniro", [`NATS for k8s/ (nats.yaml). ${why[0]}`, ...why.slice(1)]),
    // The chart fills in its subjectNamespace: HELM_NAMESPACE in subjects and bucket names, HELM_STREAM_PREFIX before stream names.
    "deploy/helm/moniro/files/nats-authorization.conf": `${natsAuthorization(HELM_PLACEHOLDER)
      .replaceAll(`${HELM_PLACEHOLDER.toUpperCase()}_`, "HELM_STREAM_PREFIX")
      .replaceAll(HELM_PLACEHOLDER, "HELM_NAMESPACE")}\n`,
  };
}

/** A namespace that appears nowhere else in the configuration, replaced by the chart's placeholders. */
const HELM_PLACEHOLDER = "helmns";
