import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyProjectOf } from "./apply-project.js";

const root = mkdtempSync(join(tmpdir(), "moniro-apply-project-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const project = (name: string, yaml: string | undefined) => {
  const dir = join(root, name);
  mkdirSync(join(dir, "team"), { recursive: true });
  writeFileSync(join(dir, "team", "carol.yaml"), "name: carol\nmodel: m1\n");
  writeFileSync(join(dir, "dave.md"), "You are Dave.");
  writeFileSync(join(dir, "stray.yaml"), "name: stray\nmodel: m1\n");
  if (yaml !== undefined) writeFileSync(join(dir, "moniro.yaml"), yaml);
  return dir;
};

describe("moniro apply -f <dir> with a moniro.yaml", () => {
  it("takes the agents moniro.yaml registers (files relative to it, inline agents with system_file inlined), not the directory's other YAML", async () => {
    const dir = project(
      "good",
      "agents:\n  - team/carol.yaml\n  - { name: dave, model: m2, prompt: { system_file: dave.md } }\n",
    );
    expect(await applyProjectOf(dir)).toEqual([
      { file: join(dir, "team", "carol.yaml"), name: "carol", definition: { name: "carol", model: "m1" } },
      {
        file: join(dir, "moniro.yaml"),
        name: "dave",
        definition: { name: "dave", model: "m2", prompt: { system: "You are Dave." } },
      },
    ]);
  });

  it("is undefined without a moniro.yaml (the directory's files are applied as before)", async () => {
    expect(await applyProjectOf(project("plain", undefined))).toBeUndefined();
  });

  it("names the field and the fix of a broken moniro.yaml or inline agent", async () => {
    const broken = await applyProjectOf(project("broken", "agentz: []\n"));
    expect(broken).toEqual([{ file: expect.stringMatching(/moniro\.yaml$/), error: expect.stringMatching(/agentz/) }]);
    const inline = await applyProjectOf(project("inline", "agents:\n  - { model: m2 }\n  - { name: erin }\n"));
    expect(inline?.map((read) => ("error" in read ? read.error : ""))).toEqual([
      expect.stringMatching(/moniro\.yaml: agents\.0: name: an inline agent needs a name/),
      expect.stringMatching(/moniro\.yaml: agents\.1: model: /),
    ]);
  });
});
