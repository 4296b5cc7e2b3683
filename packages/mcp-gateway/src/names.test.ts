import { prefixName, prefixUri, splitName, splitUri, toLabel } from "./names.js";

describe("gateway names", () => {
  test("names split back at the first separator, whatever the server's own name holds", () => {
    expect(prefixName("memory", "read_graph")).toBe("memory__read_graph");
    expect(splitName("memory__read__graph")).toEqual({ label: "memory", name: "read__graph" });
    expect(splitName("memory____x")).toEqual({ label: "memory", name: "__x" });
    expect(splitName("no-label")).toBeUndefined();
    expect(splitName("__x")).toBeUndefined();
  });

  test("URIs keep their own scheme behind the label and stay URIs", () => {
    const uri = prefixUri("everything", "demo://resource/static/document/a+b.md");
    expect(uri).toBe("everything+demo://resource/static/document/a+b.md");
    expect(new URL(uri).protocol).toBe("everything+demo:");
    expect(splitUri(uri)).toEqual({ label: "everything", uri: "demo://resource/static/document/a+b.md" });
    expect(splitUri("file:///a+b")).toBeUndefined();
  });

  test("labels are letters, digits and dashes starting with a letter", () => {
    expect(toLabel("weather.mcp")).toBe("weather-mcp");
    expect(toLabel("my_server__x")).toBe("my-server-x");
    expect(toLabel("1password")).toBe("s-1password");
    expect(toLabel("...")).toBe("server");
  });
});
