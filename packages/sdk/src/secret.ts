import type { Schemas } from "@x/platform-client";
import { allPages, type ConnectionOptions, platformClient, resolveConnection, unwrap } from "./config.js";
import { found, InvalidArgumentError } from "./errors.js";

/** A team's secret as the platform shows it: never its value. */
export interface SecretInfo {
  secretId: string;
  /** Lower case, as stored. */
  name: string;
  /** The version in use: 1 for a new secret, one more for each update. */
  version: number;
  metadata: Record<string, string>;
  createdAt: Date;
  updatedAt: Date;
}

export interface SecretWriteOptions extends ConnectionOptions {
  /** Stored with the secret; on update, replaces the secret's (left out, it is kept). */
  metadata?: Record<string, string>;
}

export interface SecretListOptions extends ConnectionOptions {
  /** Secrets fetched per request (1 to 100). */
  pageSize?: number;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const UNUSABLE_NAME = /[{}\u0000-\u001f\u007f]/;

function info(s: Schemas["Secret"]): SecretInfo {
  return {
    secretId: s.secretID,
    name: s.name,
    version: s.currentVersion,
    metadata: s.metadata ?? {},
    createdAt: new Date(s.createdAt),
    updatedAt: new Date(s.updatedAt),
  };
}

/**
 * A team's secrets, as the public client's `Secret`: values are write-only. The egress proxy
 * puts a secret's current value in place of `Secret.fill(name)` in a sandbox's outbound
 * request headers; it never enters the sandbox. A secret is named by its id or its name.
 */
export class Secret {
  static async create(name: string, value: string, opts: SecretWriteOptions = {}): Promise<SecretInfo> {
    const s = await unwrap(
      `Creating secret '${name}'`,
      platformClient(resolveConnection(opts)).POST("/secrets", {
        body: { name, value, metadata: opts.metadata },
      }),
    );
    return info(s);
  }

  /** Stores `value` as the secret's next version. */
  static async update(secret: string, value: string, opts: SecretWriteOptions = {}): Promise<SecretInfo> {
    const s = await unwrap(
      `Updating secret ${secret}`,
      platformClient(resolveConnection(opts)).POST("/secrets/{secretID}", {
        params: { path: { secretID: secret } },
        body: { value, metadata: opts.metadata },
      }),
    );
    return info(s);
  }

  static async getInfo(secret: string, opts: ConnectionOptions = {}): Promise<SecretInfo> {
    const s = await unwrap(
      `Reading secret ${secret}`,
      platformClient(resolveConnection(opts)).GET("/secrets/{secretID}", {
        params: { path: { secretID: secret } },
      }),
    );
    return info(s);
  }

  static exists(secret: string, opts: ConnectionOptions = {}): Promise<boolean> {
    return found(Secret.getInfo(secret, opts));
  }

  /** Every secret of the team, newest first. */
  static async list(opts: SecretListOptions = {}): Promise<SecretInfo[]> {
    const client = platformClient(resolveConnection(opts));
    const all = await allPages("Listing secrets", (nextToken) =>
      client.GET("/secrets", { params: { query: { limit: opts.pageSize, nextToken } } }),
    );
    return all.map(info);
  }

  /** Deletes the secret and every version of it; `false` when there was none. */
  static destroy(secret: string, opts: ConnectionOptions = {}): Promise<boolean> {
    return found(
      unwrap(
        `Deleting secret ${secret}`,
        platformClient(resolveConnection(opts)).DELETE("/secrets/{secretID}", {
          params: { path: { secretID: secret } },
        }),
      ),
    );
  }

  /** The placeholder (`${e2b.secrets.NAME}`) the egress proxy fills with the secret's current value. */
  static fill(name: string): string {
    if (name.length === 0 || UNUSABLE_NAME.test(name)) {
      throw new InvalidArgumentError(
        `Secret name ${JSON.stringify(name)} cannot be used in a placeholder: it must not be empty or hold '{', '}' or control characters.`,
      );
    }
    return `\${e2b.secrets.${name}}`;
  }
}
