import { type PairingReply, type PairingRequestInput, pairingCodeSchema } from "@moniro/envelopes";
import { Router } from "express";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";

/** Asks the signal-bridge about pairing (`<ns>.signal.pairing`). */
export interface PairingClient {
  request(request: PairingRequestInput): Promise<PairingReply>;
}

/** Raised by a PairingClient when no signal-bridge answers. */
export class NoSignalBridgeError extends Error {
  override readonly name = "NoSignalBridgeError";
}

async function ask(client: PairingClient, request: PairingRequestInput): Promise<PairingReply> {
  try {
    return await client.request(request);
  } catch (error) {
    const why = error instanceof NoSignalBridgeError ? error.message : `cannot reach NATS: ${(error as Error).message}`;
    throw new HttpError(
      503,
      "signal_bridge_unavailable",
      `no signal-bridge answered (${why}); pairing state belongs to the signal-bridge: start one with Signal configured (docs/signal.md)`,
      { "Retry-After": "2" },
    );
  }
}

/**
 * Pairing of unknown Signal senders (docs/signal.md), behind the gateway's
 * auth: `GET /v1/pairing` lists pending requests; `POST
 * /v1/pairing/:code/approve` and `…/deny` decide one. The signal-bridge owns
 * the state and answers over NATS.
 */
export function pairingRouter(deps: { pairing: PairingClient }): Router {
  const router = Router();
  router.get("/v1/pairing", async (_request, response) => {
    const reply = await ask(deps.pairing, { op: "list" });
    if (!reply.ok) throw new HttpError(502, "internal", reply.message);
    response.status(200).json({ pending: reply.pending ?? [] });
  });
  router.all("/v1/pairing", methodNotAllowed("GET"));
  for (const op of ["approve", "deny"] as const) {
    router.post(`/v1/pairing/:code/${op}`, async (request, response) => {
      const code = pairingCodeSchema.safeParse(request.params.code);
      if (!code.success) {
        throw new HttpError(400, "bad_request", `code: ${code.error.issues[0]?.message ?? "invalid"}`);
      }
      const reply = await ask(deps.pairing, { op, code: code.data });
      if (!reply.ok) {
        if (reply.error === "unknown_code") throw new HttpError(404, "not_found", reply.message);
        throw new HttpError(400, "bad_request", reply.message);
      }
      response.status(200).json({ entry: reply.entry });
    });
    router.all(`/v1/pairing/:code/${op}`, methodNotAllowed("POST"));
  }
  return router;
}
