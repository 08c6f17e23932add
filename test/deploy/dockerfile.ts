/** A small reader of the repository's Dockerfile: enough to check what the image runs. */

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** Instructions by stage; comments dropped, `\` continuations joined. */
export function parseDockerfile(text: string): { args: Instruction[]; stages: Stage[] } {
  const logical: string[] = [];
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    if (current === "" && /^\s*#/.test(line)) continue;
    if (current !== "" && /^\s*#/.test(line)) continue;
    if (line.endsWith("\\")) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim() !== "") logical.push(current.trim());
    current = "";
  }
  const args: Instruction[] = [];
  const stages: Stage[] = [];
  for (const line of logical) {
    const match = /^([A-Za-z]+)\s+(.*)$/s.exec(line);
    if (!match) throw new Error(`Dockerfile: cannot read '${line}'`);
    const keyword = (match[1] as string).toUpperCase();
    const rest = (match[2] as string).trim();
    if (keyword === "FROM") {
      const from = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      stages.push({ from: from?.[1] ?? rest, ...(from?.[2] ? { name: from[2] } : {}), instructions: [] });
    } else if (stages.length === 0) {
      args.push({ keyword, args: rest });
    } else {
      (stages.at(-1) as Stage).instructions.push({ keyword, args: rest });
    }
  }
  return { args, stages };
}

/** `ENV a=1 b="two words"` (and the legacy `ENV a 1`) as a record. */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { keyword, args } of stage.instructions) {
    if (keyword !== "ENV") continue;
    if (!args.includes("=")) {
      const [name, ...value] = args.split(/\s+/);
      env[name as string] = value.join(" ");
      continue;
    }
    for (const pair of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)) {
      const value = pair[2] as string;
      env[pair[1] as string] = /^["']/.test(value) ? value.slice(1, -1) : value;
    }
  }
  return env;
}

/** The last instruction of a kind in a stage, in exec (JSON) form; throws on shell form. */
export function execForm(stage: Stage, keyword: "CMD" | "ENTRYPOINT"): string[] | undefined {
  const found = stage.instructions.filter((i) => i.keyword === keyword).at(-1);
  if (!found) return undefined;
  if (!found.args.startsWith("[")) throw new Error(`${keyword} is in shell form: ${found.args}`);
  return JSON.parse(found.args) as string[];
}
