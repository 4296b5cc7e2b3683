import type { ContainerRuntime, RuntimeName, RuntimeOptions } from "./container-runtime.js";
import { createRuncRuntime } from "./runc.js";
import { createRunscRuntime } from "./runsc.js";

/** The runtime named `name`; throws with the apt-get line to run when its binary is missing. */
export function createRuntime(name: RuntimeName, opts: RuntimeOptions): Promise<ContainerRuntime> {
  return name === "runc" ? createRuncRuntime(opts) : createRunscRuntime(opts);
}
