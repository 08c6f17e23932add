/**
 * Whether outbound to a channel reaches anyone (a bridge serves it), and if
 * not why — the bus answers it from MONIRO_OUT's consumers, the tools ask it
 * through ToolContext.checkOutbound.
 */
export type OutboundCheck = { served: true } | { served: false; reason: string };
