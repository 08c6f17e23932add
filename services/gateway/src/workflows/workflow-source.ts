import { readdir, stat } from "node:fs/promises";
import { dirname, extname, join, resolve } from "node:path";
import {
  findProjectFile,
  loadProject,
  loadWorkflowDefinition,
  projectProblems,
  type WorkflowDefinition,
  WorkflowDefinitionError,
} from "@moniro/config";
import type { GatewayLogger } from "../ports.js";

const EXTENSIONS = [".yaml", ".yml"];

export interface WorkflowProblem {
  file: string;
  message: string;
}

export interface WorkflowSet {
  workflows: Map<string, WorkflowDefinition>;
  problems: WorkflowProblem[];
  /** The moniro.yaml the workflows come from, when the project has one. */
  projectFile?: string;
}

/**
 * The workflow definitions of the project: those its moniro.yaml registers
 * when `projectDir` (MONIRO_PROJECT_DIR) has one, else those of one directory
 * (MONIRO_WORKFLOWS_DIR). Read afresh on every call, so every gateway replica given the same directory
 * sees the same workflows and an edit takes effect at the next start. A file
 * that does not load is reported (file, field, fix) and logged once per
 * distinct problem; its last good version, when this process saw one, stays
 * in use. A moniro.yaml project that does not load (any of its files, or an
 * unknown ref) keeps its last good set of workflows whole.
 */
export class WorkflowSource {
  private readonly lastGood = new Map<string, WorkflowDefinition>();
  private readonly logged = new Map<string, string>();
  private lastGoodProject: Map<string, WorkflowDefinition> | undefined;
  private loggedProject = "";

  constructor(
    readonly dir: string,
    private readonly logger: GatewayLogger,
    readonly projectDir?: string,
  ) {}

  async load(): Promise<WorkflowSet> {
    const projectFile = this.projectDir === undefined ? undefined : await findProjectFile(this.projectDir);
    return projectFile === undefined ? this.loadDir() : this.loadProject(projectFile);
  }

  private async loadProject(projectFile: string): Promise<WorkflowSet> {
    try {
      const { workflows } = await loadProject(dirname(projectFile));
      this.lastGoodProject = workflows;
      this.loggedProject = "";
      return { workflows: new Map(workflows), problems: [], projectFile };
    } catch (error) {
      const problems = projectProblems(error);
      const summary = JSON.stringify(problems);
      if (summary !== this.loggedProject) {
        this.loggedProject = summary;
        for (const problem of problems) {
          this.logger.error(
            { projectFile, file: problem.file, err: problem.message, keptLastGood: this.lastGoodProject !== undefined },
            "project not loaded; its last good workflows stay",
          );
        }
      }
      return { workflows: new Map(this.lastGoodProject ?? []), problems, projectFile };
    }
  }

  private async loadDir(): Promise<WorkflowSet> {
    const root = resolve(this.dir);
    const problems: WorkflowProblem[] = [];
    const workflows = new Map<string, WorkflowDefinition>();
    const info = await stat(root).catch(() => undefined);
    if (info === undefined) return { workflows, problems };
    if (!info.isDirectory()) {
      problems.push({
        file: root,
        message: "is not a directory: set MONIRO_WORKFLOWS_DIR to a directory of <name>.yaml files",
      });
      return { workflows, problems };
    }
    const files = (await readdir(root)).filter((file) => EXTENSIONS.includes(extname(file))).sort();
    for (const name of files) {
      const file = join(root, name);
      let workflow: WorkflowDefinition | undefined;
      try {
        workflow = await loadWorkflowDefinition(file);
        this.lastGood.set(file, workflow);
        this.logged.delete(file);
      } catch (error) {
        if (!(error instanceof WorkflowDefinitionError)) throw error;
        const message = error.message;
        problems.push({ file, message });
        if (this.logged.get(file) !== message) {
          this.logged.set(file, message);
          this.logger.error({ file, err: message, keptLastGood: this.lastGood.has(file) }, "workflow file not loaded");
        }
        workflow = this.lastGood.get(file);
      }
      if (workflow === undefined) continue;
      const previous = workflows.get(workflow.name);
      if (previous) {
        problems.push({
          file,
          message: `workflow '${workflow.name}' is also defined in ${previous.file}: keep one of the two files`,
        });
        continue;
      }
      workflows.set(workflow.name, workflow);
    }
    return { workflows, problems };
  }
}
