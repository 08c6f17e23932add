import { NAME_PATTERN } from "@moniro/envelopes";
import type { AgentCatalog } from "../ports.js";
import { HttpError } from "./http-error.js";

/** The `:agent` of a path, known to the catalog; otherwise a 404 naming the known agents. */
export async function knownAgent(catalog: AgentCatalog, agent: string | string[] | undefined): Promise<string> {
  const name = typeof agent === "string" ? agent : "";
  if (NAME_PATTERN.test(name) && (await catalog.has(name))) return name;
  const known = catalog.names();
  const knownList = `known agents: ${known.length > 0 ? known.join(", ") : "none"}`;
  // A name no agent can have gets no advice to define it (that would be refused too).
  const message = !NAME_PATTERN.test(name)
    ? `no agent named '${name}': it is not an agent name (1-63 characters of a-z, 0-9, '_' or '-', starting with a letter or digit); ${knownList}`
    : (catalog.explainMissing?.(name) ??
      `no agent named '${name}': define it in MONIRO_AGENTS_DIR as ${name}.yaml (or PUT /v1/agents/${name}/definition); ${knownList}`);
  throw new HttpError(404, "unknown_agent", message, {}, { known: [...known] });
}
