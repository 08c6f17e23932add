import { sharedStack, stopOnSigterm } from "./shared-stack.js";

// The signal-bridge needs nothing beyond the shared stack (node:http speaks to signal-cli).
const stack = await sharedStack("signal-bridge");
stopOnSigterm(() => stack.nc.close());
stack.ready();
