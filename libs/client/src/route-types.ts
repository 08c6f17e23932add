import type { ApiRoute } from "@moniro/api";
import type { z } from "zod";

type ParamsInput<R> = R extends { params: infer P extends z.ZodType } ? { params: z.input<P> } : { params?: undefined };
type QueryInput<R> = R extends { query: infer Q extends z.ZodType } ? { query?: z.input<Q> } : { query?: undefined };
type BodyInput<R> = R extends { body: infer B extends z.ZodType }
  ? Record<string, never> extends z.input<B>
    ? { body?: z.input<B> }
    : { body: z.input<B> }
  : { body?: undefined };

/** What a call of route R takes: its path parameters, query and body, typed from the route's schemas. */
export type RouteInput<R extends ApiRoute> = ParamsInput<R> & QueryInput<R> & BodyInput<R>;

type SuccessStatus = 200 | 201 | 202 | 204;
type SchemaOutput<A> = A extends { schema: infer S extends z.ZodType } ? z.output<S> : string;

/** What a call of route R resolves to: the body of its success answer (text when it has no JSON schema). */
export type RouteOutput<R extends ApiRoute> = {
  [K in keyof R["responses"] & SuccessStatus]: SchemaOutput<R["responses"][K]>;
}[keyof R["responses"] & SuccessStatus];

/** A route's input is optional when nothing in it is required. */
export type RouteArgs<R extends ApiRoute> =
  Record<string, never> extends RouteInput<R> ? [input?: RouteInput<R>] : [input: RouteInput<R>];

/** One method per route of a record of routes, named by the record's keys (the routes' ids). */
export type RouteMethods<Routes extends Record<string, ApiRoute>> = {
  [K in keyof Routes]: (...args: RouteArgs<Routes[K]>) => Promise<RouteOutput<Routes[K]>>;
};
