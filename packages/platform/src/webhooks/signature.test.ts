import { createHash } from "node:crypto";
import { signPayload, verifySignature } from "./signature.js";

/** E2B's published verification code (docs: "Webhook verification"), as a receiver runs it. */
function e2bVerify(secret: string, payload: string, payloadSignature: string): boolean {
  const raw = createHash("sha256")
    .update(secret + payload)
    .digest("base64");
  return raw.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") === payloadSignature;
}

describe("webhook signatures", () => {
  const secret = "secret-for-event-signature-verification";
  const body = '{"version":"v2","id":"e1"}';

  it("is SHA-256 of the secret and the raw body, base64url without padding", () => {
    // a vector whose standard base64 has `/`, `+` and `=`: all three are mapped or stripped
    expect(signPayload(secret, body)).toBe("aV_B9Q3ZcFHASN1kxuOt84fJDzmJoCQ3z-67pjAN4is");
    expect(signPayload("s", "{}")).toBe("20K7jJGyoJBULG3JejR3sgao028nqWw_BmRa-n3Gac8");
  });

  it("passes E2B's own verification code, and fails it for another secret or body", () => {
    expect(e2bVerify(secret, body, signPayload(secret, body))).toBe(true);
    expect(e2bVerify("other", body, signPayload(secret, body))).toBe(false);
    expect(e2bVerify(secret, `${body} `, signPayload(secret, body))).toBe(false);
  });

  it("signs the body's UTF-8 bytes", () => {
    const text = '{"sandbox_metadata":{"name":"café ☕"}}';
    const expected = createHash("sha256")
      .update(Buffer.from(`k${text}`, "utf8"))
      .digest("base64url");
    expect(signPayload("k", text)).toBe(expected);
  });

  it("verifies in constant time, refusing any other signature", () => {
    const good = signPayload(secret, body);
    expect(verifySignature(secret, body, good)).toBe(true);
    expect(verifySignature(secret, body, `${good}=`)).toBe(false);
    const other = good.slice(0, -1) + (good.endsWith("A") ? "B" : "A");
    expect(verifySignature(secret, body, other)).toBe(false);
    expect(verifySignature(secret, body, "")).toBe(false);
  });
});
