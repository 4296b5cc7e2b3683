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

  it("keeps skopeo's words for anything else", () => {
    expect(describePullFailure(o, fatal("something odd"))).toBe(
      "pulling '127.0.0.1:5000/test/img:1' failed: something odd",
    );
    expect(describePullFailure(o, "plain last line\n")).toBe(
      "pulling '127.0.0.1:5000/test/img:1' failed: plain last line",
    );
  });
});
