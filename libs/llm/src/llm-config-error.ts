import { MoniroError } from "@moniro/ports";

/** An agent's LLM settings cannot work (unknown backend, missing key, bad value): fix the config and restart. */
export class LlmConfigError extends MoniroError {
  constructor(message: string, code: string) {
    super(message, { errorClass: "permanent", code });
  }
}
