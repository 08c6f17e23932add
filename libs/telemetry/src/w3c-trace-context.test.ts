import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { describe, expect, it } from "vitest";
import { extractTraceContext, injectTraceContext } from "./w3c-trace-context.js";

// The reference: what this replaces, so both must read and write the same headers.
const reference = new W3CTraceContextPropagator();
const TRACE = "0af7651916cd43dd8448eb211c80319c";
const SPAN = "b7ad6b7169203331";

const headers = [
  { traceparent: `00-${TRACE}-${SPAN}-01` },
  { traceparent: `00-${TRACE}-${SPAN}-00`, tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7" },
  { traceparent: ` 00-${TRACE}-${SPAN}-01 ` },
  { traceparent: `01-${TRACE}-${SPAN}-01-future-part` },
  { traceparent: `00-${TRACE}-${SPAN}-01-extra` },
  { traceparent: `ff-${TRACE}-${SPAN}-01` },
  { traceparent: `00-${"0".repeat(32)}-${SPAN}-01` },
  { traceparent: `00-${TRACE}-${"0".repeat(16)}-01` },
  { traceparent: `00-${TRACE.toUpperCase()}-${SPAN}-01` },
  { traceparent: "garbage" },
  { tracestate: "a=b" },
];

describe("W3C trace context", () => {
  it.each(headers)("extracts what @opentelemetry/core extracts: %o", (carrier) => {
    const ours = trace.getSpanContext(extractTraceContext(ROOT_CONTEXT, carrier));
    const theirs = trace.getSpanContext(reference.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter));
    expect(ours === undefined).toBe(theirs === undefined);
    if (!ours || !theirs) return;
    expect({ ...ours, traceState: ours.traceState?.serialize() }).toEqual({
      ...theirs,
      traceState: theirs.traceState?.serialize(),
    });
  });

  it.each(headers)("injects what @opentelemetry/core injects: %o", (carrier) => {
    const context = reference.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
    const theirs: Record<string, string> = {};
    reference.inject(context, theirs, defaultTextMapSetter);
    expect(injectTraceContext(context)).toEqual(theirs);
  });
});
