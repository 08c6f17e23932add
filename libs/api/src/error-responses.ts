import { errorBodySchema } from "./error-body.js";
import type { ApiResponse } from "./route.js";

/** An error answer of a route: its description (which codes, when) with the shared `{error:{code,message}}` body. */
export const error = (description: string): ApiResponse => ({ description, schema: errorBodySchema });

/** The 401 of a route behind the bearer key. */
export const UNAUTHORIZED = error("no or a wrong bearer key (`unauthorized`)");
