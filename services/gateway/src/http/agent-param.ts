import { NAME_PATTERN } from "@moniro/envelopes";
import type { AgentCatalog } from "../ports.js";
import { HttpError } from "./http-error.js";

/** The `:agent` of a path, known to the catalog; otherwise a 404 naming the known agents. */
export async function knownAgent(catalog: AgentCatalog, agent: string | string[] | undefined): Promise<string> {
  const name = typeof agent === "string" ? agent : "";
  if (NAME_PATTERN.test(name) && (await catalog.has(name))) return name;
  const known = catalog.names();
  const deleted = name ? catalog.explainMissing?.(name) : undefined;
  throw new HttpError(
    404,
    "unknown_agent",
    deleted ??
      `no agent named '${name}': define it in MONIRO_AGENTS_DIR as ${name || "<name>"}.yaml (or PUT /v1/agents/${name || "<name>"}/definition); known agents: ${known.length > 0 ? known.join(", ") : "none"}`,
    {},
    { known: [...known] },
  );
}
