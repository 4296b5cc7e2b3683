import type { Schemas } from "@x/platform-client";
import type { Store } from "../../store/index.js";
import type { HandlersFor } from "../handler.js";
import { ownedSandbox } from "./access.js";

export type NetworkDecision = Schemas["SandboxNetworkDecision"] & { sandboxId?: string };

export interface SandboxNetworkRoutesOptions {
  store: Store;
  /** A sandbox's egress decisions after a cursor, oldest first (the platform's decision log). */
  decisions(sandboxId: string, after: number, limit: number): NetworkDecision[];
}

/** The extension that shows a sandbox's egress decision log. */
export function sandboxNetworkRoutes(
  o: SandboxNetworkRoutesOptions,
): HandlersFor<"getSandboxNetworkDecisions"> {
  return {
    getSandboxNetworkDecisions: async (r) => {
      const sandbox = await ownedSandbox(o.store, r);
      const after = r.params.after ?? 0;
      const page = o.decisions(sandbox.id, after, r.params.limit ?? 100);
      return {
        status: 200,
        body: {
          decisions: page.map(({ sandboxId: _id, ...d }) => d),
          next: page.at(-1)?.seq ?? after,
        },
      };
    },
  };
}
