import { z } from "zod";
import { CATALOG_TOOL_NAMES, EXTERNAL_TOOL_NAMES, PROFILE_NAMES, type ToolProfileName } from "./tool-profiles.js";

const KNOWN_TOOLS: ReadonlySet<string> = new Set<string>([...CATALOG_TOOL_NAMES, ...EXTERNAL_TOOL_NAMES]);

const toolNameList = z.array(z.string()).superRefine((names, ctx) => {
  names.forEach((name, index) => {
    if (!KNOWN_TOOLS.has(name)) {
      ctx.addIssue({
        code: "custom",
        path: [index],
        message: `unknown tool '${name}'; known tools: ${[...KNOWN_TOOLS].join(", ")}`,
      });
    }
  });
});

/**
 * The `tools:` block of an agent YAML. `profile` picks a base set (default
 * `full`); `allow` adds tools to the profile, or, without a profile, is the
 * exact set; `deny` removes tools and always wins; `subagent: true` caps the
 * result at the `readonly` profile; `network: true` lets the agent's
 * commands use the network (off by default). @moniro/tool-catalog resolves it.
 */
export const toolPolicySchema = z
  .strictObject({
    profile: z.enum(PROFILE_NAMES as [ToolProfileName, ...ToolProfileName[]]).optional(),
    allow: toolNameList.optional(),
    deny: toolNameList.optional(),
    subagent: z.boolean().optional(),
    network: z
      .boolean()
      .optional()
      .describe(
        "Give this agent's exec / process commands the network (default false: they have only a private loopback). " +
          "The sandbox then shares the executor's network, loopback included: NATS and Redis are reachable and only their own auth protects them.",
      ),
  })
  .default({});
export type ToolPolicy = z.input<typeof toolPolicySchema>;

/** The `tools:` block of an agent definition. */
export const agentToolPolicySchema = toolPolicySchema;

/** The keys of a `tools:` block, for "did you mean" suggestions. */
export const TOOL_POLICY_KEYS: readonly string[] = Object.keys(toolPolicySchema.unwrap().shape);
