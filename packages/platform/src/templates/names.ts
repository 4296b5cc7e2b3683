import { isTemplateIdForm } from "../lib/ids.js";
import { DomainError } from "../model/errors.js";
import { checkRoom, SYSTEM_NAMESPACE } from "../model/team.js";
import {
  DEFAULT_TAG,
  isReservedTemplateName,
  RESERVED_TEMPLATE_NAMES,
  type Template,
} from "../model/template.js";
import type { Store } from "../store/index.js";

/** A name or tag a caller sent that cannot be used; the API answers 400 with the message. */
export class InvalidName extends DomainError {
  constructor(message: string) {
    super("invalid", message);
    this.name = "InvalidName";
  }
}

/** Names and tags the way the public service accepts them: lowercase, no spaces, no colons. */
const ALIAS = /^[a-z0-9_-]+$/;
const TAG = /^[a-z0-9._-]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `alias`, `namespace/alias`, either with `:tag`. */
export interface TemplateName {
  namespace?: string;
  alias: string;
  tag?: string;
}

export function normalizeTag(raw: string): string {
  const tag = raw.trim().toLowerCase();
  if (!TAG.test(tag))
    throw new InvalidName(`invalid tag '${raw}': use lowercase letters, digits, '.', '_' and '-'`);
  // a tag that looks like a build id would make `name:<build id>` ambiguous
  if (UUID.test(tag)) throw new InvalidName(`invalid tag '${raw}': a tag cannot be a UUID`);
  return tag;
}

/** Normalised, deduplicated tags, in the order given. */
export function normalizeTags(raw: readonly string[]): string[] {
  return [...new Set(raw.map(normalizeTag))];
}

export function parseName(raw: string): TemplateName {
  const input = raw.trim().toLowerCase();
  const colon = input.indexOf(":");
  const base = colon >= 0 ? input.slice(0, colon) : input;
  const tag = colon >= 0 ? normalizeTag(input.slice(colon + 1)) : undefined;
  const slash = base.indexOf("/");
  const namespace = slash >= 0 ? base.slice(0, slash) : undefined;
  const alias = slash >= 0 ? base.slice(slash + 1) : base;
  if (!ALIAS.test(alias)) {
    throw new InvalidName(
      `invalid name '${raw}': use lowercase letters, digits, '_' and '-' (optionally 'namespace/' before and ':tag' after)`,
    );
  }
  if (namespace !== undefined && !ALIAS.test(namespace))
    throw new InvalidName(`invalid namespace in '${raw}'`);
  return { namespace, alias, tag };
}

/**
 * Parses a name a team gives one of its own templates: a namespace, when present, must be the
 * team's own; the reserved names are the system team's alone, and no name may have a template
 * id's form (an id resolves first, so such a name would only mislead).
 */
export function parseOwnName(raw: string, teamNamespace: string): TemplateName & { namespace: string } {
  const name = parseName(raw);
  if (name.namespace !== undefined && name.namespace !== teamNamespace) {
    throw new InvalidName(
      `namespace '${name.namespace}' in '${raw}' is not your team's ('${teamNamespace}')`,
    );
  }
  if (teamNamespace !== SYSTEM_NAMESPACE && isReservedTemplateName(name.alias)) {
    throw new InvalidName(
      `the name '${name.alias}' is reserved for the platform's own templates (${RESERVED_TEMPLATE_NAMES.join(", ")}): choose another`,
    );
  }
  if (isTemplateIdForm(name.alias)) {
    throw new InvalidName(
      `invalid name '${raw}': 20 hexadecimal digits are a template id's form, not a name: choose another`,
    );
  }
  return { ...name, namespace: teamNamespace };
}

export function fullName(namespace: string, alias: string): string {
  return `${namespace}/${alias}`;
}

export function withTag(name: string, tag: string | undefined): string {
  return `${name}:${tag ?? DEFAULT_TAG}`;
}

/**
 * The template `namespace/alias` names, created for `teamId` when there is none. Two requests
 * naming a new template at once both end up with the same one: the loser of the race for the
 * name drops the template it made and joins the winner's.
 */
export async function templateNamed(
  store: Store,
  teamId: string,
  name: { namespace: string; alias: string },
): Promise<Template> {
  const existing = await templateOfName(store, name);
  if (existing) return existing;
  const created = await store.templates.createTemplate(teamId);
  if (await store.templates.addAlias(name.namespace, name.alias, created.id)) return created;
  await store.templates.deleteTemplate(created.id);
  const winner = await templateOfName(store, name);
  if (!winner) throw new Error(`template name ${fullName(name.namespace, name.alias)} vanished while taken`);
  return winner;
}

/**
 * Refuses (403) what would make the team one template more than it may hold: a new name
 * (`name` without a template yet), or no name at all (a snapshot's own template).
 */
export async function checkTemplateRoom(
  store: Store,
  teamId: string,
  name: { namespace: string; alias: string } | undefined,
  maxTemplates: number,
): Promise<void> {
  if (name && (await templateOfName(store, name))) return;
  checkRoom(
    await store.templates.countTemplates(teamId),
    maxTemplates,
    "templates (snapshots' included)",
    "delete one (DELETE /templates/{templateID})",
  );
}

async function templateOfName(
  store: Store,
  name: { namespace: string; alias: string },
): Promise<Template | undefined> {
  const id = await store.templates.aliasTarget(name.namespace, name.alias);
  return id ? store.templates.getTemplate(id) : undefined;
}
