import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { displayPath } from "@moniro/config";
import { afterAll, describe, expect, it } from "vitest";
import { applyFilesOf, readApplyFile } from "./apply-files.js";

const dir = mkdtempSync(join(tmpdir(), "moniro-apply-"));
const shown = (file: string) => displayPath(file);
const write = (name: string, text: string) => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};

describe("moniro apply: reading definition files", () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("inlines prompt.system_file, read relative to the YAML file, as prompt.system", async () => {
    mkdirSync(join(dir, "prompts"), { recursive: true });
    writeFileSync(join(dir, "prompts", "ada.md"), "You are Ada.\nBe brief.\n");
    const file = write("ada.yaml", "name: ada\nmodel: mock\nprompt:\n  system_file: prompts/ada.md\n");
    expect(await readApplyFile(file)).toEqual({
      file,
      name: "ada",
      definition: { name: "ada", model: "mock", prompt: { system: "You are Ada.\nBe brief.\n" } },
    });
  });

  it("takes the agent's name from the file name when the YAML has none", async () => {
    const file = write("bo.yml", "model: mock\n");
    expect(await readApplyFile(file)).toEqual({ file, name: "bo", definition: { model: "mock" } });
  });

  it("bad YAML: names the file, line and column", async () => {
    const file = write("bad.yaml", "name: bad\nmodel: [mock\n");
    expect(await readApplyFile(file)).toEqual({
      file,
      name: "bad",
      error: expect.stringMatching(new RegExp(`^${shown(file)}: not valid YAML at line 3, column 1: `)),
    });
  });

  it("a missing system_file names the file, the field and the fix", async () => {
    const file = write("cy.yaml", "model: mock\nprompt:\n  system_file: nope.md\n");
    expect(await readApplyFile(file)).toEqual({
      file,
      name: "cy",
      error: `${shown(file)}: prompt.system_file: file ${shown(join(dir, "nope.md"))} does not exist: create it, or fix the path (it is relative to the YAML file)`,
    });
  });

  it("a bad field names the file and the field, with the closest known key", async () => {
    const file = write("di.yaml", "model: mock\nmax_step: 3\n");
    expect(await readApplyFile(file)).toMatchObject({
      error: `${shown(file)}: max_step: unknown key 'max_step'; did you mean 'max_steps'?`,
    });
    const list = write("li.yaml", "- model: mock\n");
    expect(await readApplyFile(list)).toMatchObject({
      error: `${shown(list)}: must be a mapping of keys (name, model, …), not a list`,
    });
  });

  it("a directory: its *.yaml and *.yml files by name; a missing path is an error", async () => {
    write("notes.txt", "not a definition");
    const files = (await applyFilesOf(dir)).map((f) => relative(dir, f));
    expect(files).toEqual(["ada.yaml", "bad.yaml", "bo.yml", "cy.yaml", "di.yaml", "li.yaml"]);
    await expect(applyFilesOf(join(dir, "nothing"))).rejects.toThrow(
      `${join(dir, "nothing")} does not exist: give a YAML file or a directory of them (e.g. .agents/)`,
    );
  });
});
