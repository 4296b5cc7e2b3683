import { envCode, normalizeLanguage } from "./languages.js";

test("languages are normalised as E2B's server does", () => {
  expect(normalizeLanguage(undefined)).toBe("python");
  expect(normalizeLanguage(" JS ")).toBe("javascript");
  expect(normalizeLanguage("ts")).toBe("typescript");
  expect(normalizeLanguage("R")).toBe("r");
  expect(normalizeLanguage("cobol")).toBeUndefined();
});

test("values are quoted so no value ends its literal early", () => {
  const nasty = `a'b"c\\d\n$(x)`;
  expect(envCode("bash", { K: nasty })).toBe(`export K='a'\\''b"c\\d\n$(x)'`);
  expect(envCode("python", { K: nasty })).toBe(`__import__("os").environ["K"] = ${JSON.stringify(nasty)}`);
  expect(envCode("javascript", { K: undefined })).toBe(`delete process.env["K"];`);
  expect(envCode("r", { K: "v\0" })).toBe(`Sys.setenv(K = "v")`);
  expect(envCode("java", { K: "v" })).toBe(`System.setProperty("K", "v");`);
});

test("names that are not identifiers are refused", () => {
  expect(() => envCode("bash", { "A;rm -rf /": "x" })).toThrow(/not a valid environment variable name/);
});
