import { randomBytes } from "node:crypto";
import type { Schemas } from "@x/platform-client";
import { CliError, CONNECTION_HELP, type Connection, call, connect } from "../connection.js";
import { type Io, print } from "../output/io.js";
import { table } from "../output/table.js";
import { integer, parse, required } from "./args.js";

type EventType = Schemas["SandboxEventType"];
type Short = EventType extends `sandbox.lifecycle.${infer S}` ? S : never;

/** Every event type by its short name (a type of the spec missing here fails tsc). */
const EVENTS: Record<Short, true> = {
  created: true,
  killed: true,
  updated: true,
  paused: true,
  resumed: true,
  timed_out: true,
  error: true,
  lost: true,
};
const SHORT_NAMES = Object.keys(EVENTS) as Short[];

const HELP = `x webhook: the team's sandbox lifecycle webhooks (signed POSTs, E2B's wire)

  x webhook create NAME URL [--events LIST] [--secret SECRET] [--disabled]
                                     register a webhook; LIST is comma-separated
                                     (${SHORT_NAMES.join(",")}; all by default); without
                                     --secret one is made and shown once
  x webhook list                     the team's webhooks
  x webhook rm WEBHOOK               unregister a webhook
  x webhook deliveries WEBHOOK [--limit N]
                                     its latest delivery attempts, newest first

WEBHOOK is a webhook's name or ID. Deliveries carry e2b-signature: base64url (no padding) of
sha256(secret + body).

${CONNECTION_HELP}`;

function eventsOf(command: string, list: string | undefined): EventType[] {
  if (list === undefined) return SHORT_NAMES.map((s) => `sandbox.lifecycle.${s}` as EventType);
  return list.split(",").map((item) => {
    const short = item.trim().replace(/^sandbox\.lifecycle\./, "");
    if (!Object.hasOwn(EVENTS, short))
      throw new CliError(`${command}: unknown event '${item}': one of ${SHORT_NAMES.join(", ")}`, 2);
    return `sandbox.lifecycle.${short}` as EventType;
  });
}

const shortOf = (type: string) => type.replace(/^sandbox\.lifecycle\./, "");

/** The team's webhook by name or ID. */
async function find(conn: Connection, ref: string): Promise<Schemas["Webhook"]> {
  const { data: all } = await call(conn, "listing webhooks", conn.api.GET("/events/webhooks"));
  const found = all.find((w) => w.id === ref) ?? all.find((w) => w.name === ref);
  if (!found) throw new CliError(`no webhook '${ref}': 'x webhook list' shows the team's webhooks`);
  return found;
}

/** `x webhook create|list|rm|deliveries`; returns the exit code. */
export async function webhook(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    (command ? io.out : io.err)(HELP);
    return command ? 0 : 2;
  }
  if (!["create", "list", "rm", "deliveries"].includes(command))
    throw new CliError(`x webhook: unknown command '${command}'\n${HELP}`, 2);
  const name = `x webhook ${command}`;
  const { values, positionals } = parse(name, rest, {
    events: { type: "string" },
    secret: { type: "string" },
    disabled: { type: "boolean", default: false },
    limit: { type: "string" },
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const json = Boolean(values.json);
  const conn = connect(values);
  switch (command) {
    case "create": {
      const given = values.secret as string | undefined;
      const signatureSecret = given ?? randomBytes(24).toString("base64url");
      const { data } = await call(
        conn,
        "registering a webhook",
        conn.api.POST("/events/webhooks", {
          body: {
            name: required(name, positionals, 0, "the webhook's name"),
            url: required(name, positionals, 1, "the URL to send events to"),
            events: eventsOf(name, values.events as string | undefined),
            enabled: !values.disabled,
            signatureSecret,
          },
        }),
      );
      const shown = given ? data : { ...data, signatureSecret };
      print(
        io,
        json,
        shown,
        given ? `${data.id}\n` : `${data.id}\nsignature secret (shown once): ${signatureSecret}\n`,
      );
      return 0;
    }
    case "list": {
      const { data } = await call(conn, "listing webhooks", conn.api.GET("/events/webhooks"));
      print(io, json, data, () =>
        data.length === 0
          ? "no webhooks\n"
          : table([
              ["WEBHOOK", "NAME", "ENABLED", "URL", "EVENTS"],
              ...data.map((w) => [
                w.id,
                w.name,
                w.enabled ? "yes" : "no",
                w.url,
                w.events.map(shortOf).join(","),
              ]),
            ]),
      );
      return 0;
    }
    case "rm": {
      const w = await find(conn, required(name, positionals, 0, "the webhook's name or ID"));
      await call(
        conn,
        `deleting webhook ${w.name}`,
        conn.api.DELETE("/events/webhooks/{webhookID}", { params: { path: { webhookID: w.id } } }),
      );
      print(io, json, { deleted: w.id }, `deleted ${w.name}\n`);
      return 0;
    }
    case "deliveries": {
      const w = await find(conn, required(name, positionals, 0, "the webhook's name or ID"));
      const limit = integer(name, "limit", values.limit as string | undefined) ?? 20;
      if (limit < 1 || limit > 100) throw new CliError(`${name}: --limit takes 1 to 100, got ${limit}`, 2);
      const { data } = await call(
        conn,
        `reading the deliveries of ${w.name}`,
        conn.api.GET("/events/webhooks/{webhookID}/deliveries", {
          params: { path: { webhookID: w.id }, query: { limit } },
        }),
      );
      print(io, json, data, () =>
        data.length === 0
          ? "no deliveries yet\n"
          : table([
              ["TIME", "EVENT", "TYPE", "ATTEMPT", "RESULT", "MS", "OUTCOME"],
              ...data.map((a) => [
                a.timestamp,
                a.eventID,
                shortOf(a.eventType),
                String(a.attempt),
                a.statusCode === null ? (a.error ?? "-") : String(a.statusCode),
                String(a.durationMs),
                a.outcome,
              ]),
            ]),
      );
      return 0;
    }
  }
  return 2;
}
