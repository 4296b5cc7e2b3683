import { describePullFailure } from "./pull.js";

/** skopeo's last words, as it prints them on stderr. */
const fatal = (msg: string) =>
  `Getting image source signatures\ntime="2026-01-01T00:00:00Z" level=fatal msg="${msg.replace(/"/g, '\\"')}"`;

describe("describePullFailure", () => {
  const o = {
    image: "127.0.0.1:5000/test/img:1",
    source: { registry: "127.0.0.1:5000" },
    withCredentials: false,
  };

  it("says an image or tag is unknown", () => {
    const out = fatal(
      "initializing source docker://127.0.0.1:5000/test/img:2: reading manifest 2 in 127.0.0.1:5000/test/img: manifest unknown: manifest unknown",
    );
    expect(describePullFailure(o, out)).toBe(
      "image '127.0.0.1:5000/test/img:1' not found in registry 127.0.0.1:5000: no such repository or tag",
    );
  });

  it("tells refused credentials from missing ones", () => {
    const out = fatal("reading manifest 1 in 127.0.0.1:5000/test/img: unauthorized: authentication required");
    expect(describePullFailure({ ...o, withCredentials: true }, out)).toMatch(
      /refused the credentials .* check the username and password/,
    );
    expect(describePullFailure(o, out)).toMatch(
      /requires credentials .* fromImage\(image, \{ username, password \}\)/,
    );
  });

  it("says why a registry cannot be reached", () => {
    const refused = fatal(
      'pinging container registry 127.0.0.1:1: Get "http://127.0.0.1:1/v2/": dial tcp 127.0.0.1:1: connect: connection refused',
    );
    expect(describePullFailure(o, refused)).toBe(
      "cannot reach registry 127.0.0.1:5000 to pull '127.0.0.1:5000/test/img:1': connection refused",
    );
    const unknown = fatal(
      'Get "https://r.invalid/v2/": dial tcp: lookup r.invalid on 10.0.0.53:53: no such host',
    );
    expect(describePullFailure(o, unknown)).toMatch(/cannot reach .*: no such host$/);
    const http = fatal('Get "https://r:5000/v2/": http: server gave HTTP response to HTTPS client');
    expect(describePullFailure(o, http)).toMatch(/speaks plain HTTP: .*--insecure-registry 127.0.0.1:5000/);
  });

  it("never repeats what a registry answered beyond its status", () => {
    const body = fatal(
      "reading manifest 1 in 127.0.0.1:5000/test/img: unknown: <html>redis_version:7.2 internal-secret</html>",
    );
    expect(describePullFailure(o, body)).toBe(
      "pulling '127.0.0.1:5000/test/img:1' from registry 127.0.0.1:5000 failed: its answer was not understood (the platform's log has skopeo's words)",
    );
    expect(describePullFailure(o, "plain last line\n")).not.toContain("plain last line");
    const status = fatal("reading manifest 1 in 127.0.0.1:5000/test/img: StatusCode: 502, secret body");
    expect(describePullFailure(o, status)).toBe(
      "registry 127.0.0.1:5000 answered HTTP 502 to the pull of '127.0.0.1:5000/test/img:1'",
    );
    const tls = fatal(
      'Get "https://r/v2/": x509: certificate is valid for db.internal.corp, secret.internal, not r',
    );
    expect(describePullFailure(o, tls)).toBe(
      "registry 127.0.0.1:5000 failed TLS for '127.0.0.1:5000/test/img:1': certificate not valid for this name",
    );
  });

  it("says what the pull's proxy refused or could not reach, before skopeo's words", () => {
    const out = fatal('pinging container registry 127.0.0.1:5000: Get "https://127.0.0.1:5000/v2/": EOF');
    expect(
      describePullFailure(o, out, [{ host: "127.0.0.1", port: 5000, failed: "connection refused" }]),
    ).toBe("cannot reach registry 127.0.0.1:5000 to pull '127.0.0.1:5000/test/img:1': connection refused");
    expect(
      describePullFailure(o, out, [
        { host: "169.254.169.254", port: 80, refused: "link-local", literal: true },
      ]),
    ).toBe(
      "registry 127.0.0.1:5000 sent the pull of '127.0.0.1:5000/test/img:1' elsewhere (a token service or a redirect), and 169.254.169.254 is a link-local address: the platform does not connect there for tenants",
    );
    expect(
      describePullFailure(o, out, [{ host: "auth.example", port: 443, failed: "no such host" }]),
    ).toMatch(/^cannot reach auth.example, where registry 127.0.0.1:5000 sent the pull/);
  });
});
