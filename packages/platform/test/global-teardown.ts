/**
 * After every test file: the host's /dev/null must be as it was. A runtime handed it as a
 * standard stream leaves it owned by the sandbox's user (see src/runtime/host-devices.ts), and
 * whatever part of the platform regresses, the whole run fails here.
 */
export default async function globalTeardown(): Promise<void> {
  const { devNullProblem } =
    require("../src/runtime/host-devices") as typeof import("../src/runtime/host-devices.js");
  const problem = devNullProblem();
  if (problem) throw new Error(`the test run changed the host's /dev/null: ${problem}`);
}
