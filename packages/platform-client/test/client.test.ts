import { createPlatformClient } from "../src/index.js";

/** A fetch that records the request and answers with a fixed JSON response. */
function recordingFetch(status: number, body: unknown) {
  const requests: Request[] = [];
  const fetch = async (input: Request) => {
    requests.push(input);
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  };
  return { requests, fetch: fetch as unknown as typeof globalThis.fetch };
}

describe("createPlatformClient", () => {
  it("sends the API key and builds typed paths", async () => {
    const { requests, fetch } = recordingFetch(200, []);
    const client = createPlatformClient({ baseUrl: "http://api.test/", apiKey: "e2b_abc", fetch });
    const { data, error } = await client.GET("/v2/sandboxes", {
      params: { query: { limit: 5, state: ["running"] } },
    });
    expect(error).toBeUndefined();
    expect(data).toEqual([]);
    expect(requests[0]?.headers.get("x-api-key")).toBe("e2b_abc");
    expect(requests[0]?.url).toBe("http://api.test/v2/sandboxes?limit=5&state=running");
  });

  it("keeps a key given on the call itself", async () => {
    const { requests, fetch } = recordingFetch(200, { status: "ok" });
    const client = createPlatformClient({ baseUrl: "http://api.test", apiKey: "e2b_default", fetch });
    await client.GET("/health", { headers: { "X-API-Key": "e2b_other" } });
    expect(requests[0]?.headers.get("x-api-key")).toBe("e2b_other");
  });

  it("returns the error body with code and message", async () => {
    const { fetch } = recordingFetch(404, { code: 404, message: "sandbox abc not found" });
    const client = createPlatformClient({ baseUrl: "http://api.test", apiKey: "e2b_abc", fetch });
    const { data, error, response } = await client.GET("/sandboxes/{sandboxID}", {
      params: { path: { sandboxID: "abc" } },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(404);
    expect(error).toEqual({ code: 404, message: "sandbox abc not found" });
  });
});
