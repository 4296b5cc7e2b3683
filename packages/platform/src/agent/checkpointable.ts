import { ENVD_PORT } from "@x/envd-client";
import { runCommand } from "./commands.js";

/** envd's port as /proc/net/tcp writes it. */
const ENVD_PORT_HEX = ENVD_PORT.toString(16).toUpperCase().padStart(4, "0");

/**
 * Whether gVisor can save the sandbox's sockets: only envd's own (which it closes on quiesce)
 * may exist. A socket of the sandbox's own processes (a listener, a connection) makes this
 * runsc refuse the checkpoint, and a refused checkpoint can take the sandbox down with it.
 */
export async function checkpointable(envd: { address: string; accessToken: string }): Promise<boolean> {
  if (!envd.address) return false;
  let table = "";
  const result = await runCommand(
    envd,
    { cmd: "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null", user: "root" },
    {
      onOutput: (line, stream) => {
        if (stream === "stdout") table += `${line}\n`;
      },
    },
  ).catch(() => undefined);
  if (!result) return false;
  const foreign = table
    .split("\n")
    .map((line) => line.trim().split(/\s+/)[1] ?? "")
    .filter((local) => /^[0-9A-F]+:[0-9A-F]{4}$/.test(local))
    .filter((local) => local.split(":")[1] !== ENVD_PORT_HEX);
  return foreign.length === 0;
}
