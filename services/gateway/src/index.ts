export { createGatewayApp, type GatewayAppOptions } from "./app.js";
export { type GatewayConfig, gatewayConfigSchema, loadGatewayConfig } from "./config.js";
export { type RunningGateway, startGateway } from "./gateway.js";
