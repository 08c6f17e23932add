/**
 * A private 3-master Redis Cluster for tests (redis-server in cluster mode on
 * free loopback ports, each in its own temporary directory; `stop()` ends
 * exactly those processes). It lives in `@moniro/store/test`, where the
 * store's contract suites use it too; e2e tests and benches take it from here.
 */
export { type PrivateRedisCluster, startRedisCluster } from "@moniro/store/test";
