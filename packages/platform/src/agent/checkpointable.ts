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
  // each line is judged as it comes: nothing of the output (the sandbox's to shape) is kept
  let foreign = false;
  const result = await runCommand(
    envd,
    { cmd: "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null", user: "root" },
    {
      onOutput: (line, stream) => {
        if (stream === "stdout" && !foreign) foreign = isForeignSocket(line);
      },
    },
  ).catch(() => undefined);
  return result !== undefined && !foreign;
}

/** Whether a line of /proc/net/tcp{,6} is a socket other than envd's own. */
function isForeignSocket(line: string): boolean {
  const local = line.trim().split(/\s+/)[1] ?? "";
  return /^[0-9A-F]+:[0-9A-F]{4}$/.test(local) && local.split(":")[1] !== ENVD_PORT_HEX;
}
