import { describe, expect, it } from "vitest";
import { stackOptions } from "./cli-options.js";
import { choosePorts } from "./free-ports.js";
import { servicePort } from "./stack-plan.js";

describe("choosePorts", () => {
  it("picks a distinct free port for every service whose port is 0", async () => {
    const offered = [5000, 5000, 5001, 5002, 5003, 5004];
    const pick = async () => offered.shift() ?? 0;
    const options = await choosePorts(stackOptions({ gatewayPort: "0", basePort: "0" }, {}, "/p"), pick);
    expect(options.ports).toEqual({
      "tool-executor": 5000,
      "agent-runner": 5001,
      scheduler: 5002,
      "signal-bridge": 5003,
      gateway: 5004,
    });
    expect(servicePort("gateway", options)).toBe(5004);
  });

  it("leaves fixed ports alone", async () => {
    const options = await choosePorts(stackOptions({ gatewayPort: "0" }, {}, "/p"), async () => 7777);
    expect(options.ports).toEqual({ gateway: 7777 });
    expect(servicePort("scheduler", options)).toBe(9103);
  });
});
