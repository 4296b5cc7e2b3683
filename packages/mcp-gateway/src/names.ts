/**
 * How the gateway names what its servers offer, so that two servers never collide: a server's
 * label is letters, digits and dashes (never an underscore), starting with a letter; its
 * tools, prompts and resources are named `<label>__<name>`, and its resource URIs become
 * `<label>+<uri>` (a URI still: the label joins the scheme). Both split back unambiguously at
 * the first `__` or `+`, because a label contains neither.
 */

export const NAME_SEPARATOR = "__";
export const URI_SEPARATOR = "+";

const LABEL = /^[A-Za-z][A-Za-z0-9-]*$/;

export function isLabel(text: string): boolean {
  return LABEL.test(text);
}

/** A label made of any text: other characters become dashes, and it starts with a letter. */
export function toLabel(text: string): string {
  const dashed = text
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .replace(/-{2,}/g, "-");
  if (dashed === "") return "server";
  return /^[A-Za-z]/.test(dashed) ? dashed : `s-${dashed}`;
}

export function prefixName(label: string, name: string): string {
  return `${label}${NAME_SEPARATOR}${name}`;
}

/** The label and the server's own name of a gateway name, or undefined when it has no label. */
export function splitName(name: string): { label: string; name: string } | undefined {
  const at = name.indexOf(NAME_SEPARATOR);
  if (at <= 0) return undefined;
  return { label: name.slice(0, at), name: name.slice(at + NAME_SEPARATOR.length) };
}

export function prefixUri(label: string, uri: string): string {
  return `${label}${URI_SEPARATOR}${uri}`;
}

export function splitUri(uri: string): { label: string; uri: string } | undefined {
  const at = uri.indexOf(URI_SEPARATOR);
  if (at <= 0) return undefined;
  const label = uri.slice(0, at);
  return isLabel(label) ? { label, uri: uri.slice(at + URI_SEPARATOR.length) } : undefined;
}
