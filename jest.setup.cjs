// Tests start real sandboxes and servers: give each up to five minutes. Set here rather than
// as `testTimeout`, which jest honours only in a root config, not per project.
jest.setTimeout(Number(process.env.X_TEST_TIMEOUT_MS ?? 300_000));
