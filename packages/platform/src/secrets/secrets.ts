import { isTypeId, newTypeId } from "../lib/ids.js";
import type { Logger } from "../lib/log.js";
import { conflict } from "../model/errors.js";
import {
  checkedSecretName,
  checkSecretMetadata,
  checkSecretValue,
  parseSecretSelector,
  SECRET_CONFLICT,
  type SecretInfo,
  type SecretSelector,
  secretNotFound,
} from "../model/secret.js";
import type { Store } from "../store/index.js";
import type { KeysetCursor } from "../store/paging.js";
import type { SecretBox } from "./secret-box.js";

const ID_PREFIX = "sec";

export const isSecretId = (id: string) => isTypeId(id, ID_PREFIX);

/** A `{secretID}` of the API: an id (parsed strictly) or a name, or E2B's 400. */
export const secretSelector = (raw: string): SecretSelector => parseSecretSelector(raw, isSecretId);

/**
 * Teams' secrets: E2B's rules on what is stored, the values sealed by the platform's key on
 * the way in and opened only for the egress proxy (`value`). Nothing here logs or returns a
 * value, and no error carries one.
 */
export class Secrets {
  constructor(
    private readonly store: Store,
    private readonly box: SecretBox,
    private readonly log: Logger,
  ) {}

  async create(teamId: string, body: { name: string; value: string; metadata?: Record<string, string> }) {
    const name = checkedSecretName(body.name);
    checkSecretValue(body.value);
    const metadata = body.metadata ?? {};
    checkSecretMetadata(metadata);
    const secret = await this.store.secrets.insert(
      { id: newTypeId(ID_PREFIX), teamId, name, metadata },
      (id, v) => this.box.seal(body.value, id, v),
    );
    if (!secret) throw conflict(SECRET_CONFLICT);
    return secret;
  }

  /** Stores the value as the next version; metadata given replaces the secret's, left out keeps it. */
  async update(teamId: string, selector: string, body: { value: string; metadata?: Record<string, string> }) {
    const which = secretSelector(selector);
    checkSecretValue(body.value);
    if (body.metadata !== undefined) checkSecretMetadata(body.metadata);
    const secret = await this.store.secrets.addVersion(teamId, which, body.metadata, (id, v) =>
      this.box.seal(body.value, id, v),
    );
    if (!secret) throw secretNotFound();
    return secret;
  }

  async get(teamId: string, selector: string): Promise<SecretInfo> {
    const secret = await this.store.secrets.get(teamId, secretSelector(selector));
    if (!secret) throw secretNotFound();
    return secret;
  }

  list(teamId: string, opts: { limit: number; after?: KeysetCursor }): Promise<SecretInfo[]> {
    return this.store.secrets.list(teamId, opts);
  }

  async delete(teamId: string, selector: string): Promise<void> {
    if (!(await this.store.secrets.delete(teamId, secretSelector(selector)))) throw secretNotFound();
  }

  /**
   * The current value of the team's secret of this normalised name, for the egress proxy;
   * undefined when there is none, or when it cannot be opened (another key sealed it: that is
   * logged, and the request it was for fails closed).
   */
  async value(teamId: string, name: string): Promise<string | undefined> {
    const sealed = await this.store.secrets.current(teamId, name);
    if (!sealed) return undefined;
    try {
      return this.box.open(sealed, sealed.secretId, sealed.version);
    } catch {
      const why =
        sealed.keyId === this.box.keyId
          ? "it does not open with this platform's secrets key (it was altered, or the key file was replaced by another of the same id)"
          : `it was sealed with the secrets key ${sealed.keyId}, and this platform's is ${this.box.keyId}: every node must use the same --secrets-key-file`;
      this.log.error(
        { teamId, secretId: sealed.secretId, version: sealed.version },
        `cannot decrypt secret ${sealed.secretId} version ${sealed.version}: ${why}`,
      );
      return undefined;
    }
  }

  /** Logs, at start, secret versions that another key sealed: they cannot be read with this one. */
  async checkKey(): Promise<void> {
    for (const [keyId, count] of await this.store.secrets.versionsByKey()) {
      if (keyId === this.box.keyId) continue;
      this.log.error(
        { keyId, count, ownKeyId: this.box.keyId },
        `${count} secret version(s) were sealed with the secrets key ${keyId}, not this platform's (${this.box.keyId}): they cannot be decrypted; give every node and every start the same --secrets-key-file`,
      );
    }
  }
}
