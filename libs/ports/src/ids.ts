import { newId } from "@moniro/envelopes";

/** Id generation, injected so tests get deterministic ids. */
export interface Ids {
  newId(): string;
}

export const ulidIds: Ids = { newId: () => newId() };
