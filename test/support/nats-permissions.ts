// The least-privilege NATS configuration the deployments ship (libs/bus/src/nats-permissions.ts).
export { NATS_USERS, type NatsUser, natsAuthorization, passwordVariable } from "@moniro/bus";
