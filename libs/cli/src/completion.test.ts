import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { bashCompletion, zshCompletion } from "./completion.js";
import { buildProgram } from "./program.js";

/** What bash offers for the words typed so far (the last one being completed). */
function complete(words: string[]): string[] {
  const script = `${bashCompletion(buildProgram())}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}
_moniro_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync("bash", ["-c", script], { encoding: "utf8" }).split("\n").filter(Boolean).sort();
}

describe("moniro completion", () => {
  it("bash: completes commands, subcommands, aliases and a command's options from the commander tree", () => {
    expect(complete(["moniro", "st"])).toEqual(["start", "status", "stop"]);
    expect(complete(["moniro", "t"])).toEqual(["tail", "thread"]);
    expect(complete(["moniro", "agent", ""])).toEqual([
      "create",
      "delete",
      "edit",
      "info",
      "list",
      "ls",
      "memory",
      "notes",
      "rm",
      "todo",
      "todos",
    ]);
    expect(complete(["moniro", "dlq", ""])).toEqual(["list", "ls", "replay"]);
    expect(complete(["moniro", "schedule", "a"])).toEqual(["add"]);
    expect(complete(["moniro", "ap"])).toEqual(["apply"]);
    expect(complete(["moniro", "pairing", "a"])).toEqual(["approve"]);
    expect(complete(["moniro", "thread", "alice", "--"])).toEqual([
      "--after",
      "--before",
      "--context",
      "--gateway",
      "--help",
      "--limit",
      "--order",
      "--output",
    ]);
    expect(complete(["moniro", "-"])).toEqual(["--help", "--version", "-V"]);
  });

  it("zsh: the same completion through bashcompinit", () => {
    const script = zshCompletion(buildProgram());
    expect(script.startsWith("#compdef moniro\n")).toBe(true);
    expect(script).toContain("bashcompinit");
    expect(script).toContain("complete -o default -F _moniro_complete moniro");
  });
});
