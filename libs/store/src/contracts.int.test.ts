import { describeRedisContracts } from "./contract/redis-contracts.js";
import { testRedis } from "./test/redis-fixture.js";

// The Redis adapters against the shared single Redis (127.0.0.1:6379), one
// random key prefix per test, deleted afterwards.
describeRedisContracts("", () => testRedis());
