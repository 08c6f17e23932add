import type { CaseTable } from "./case.js";

/**
 * Conformance cases of the routes in libs/api/src/send.ts, by route id: add
 * one success and one error case for every route you add there (see admin.ts
 * here for the shape). The conformance test fails for a route without.
 */
export const sendCases: CaseTable = {};
