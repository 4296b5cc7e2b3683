import { type Db, type DbOptions, openDb } from "./db.js";
import { EventStore } from "./events.js";
import { SandboxStore } from "./sandboxes.js";
import { SnapshotStore } from "./snapshots.js";
import { TeamStore } from "./teams.js";
import { TemplateStore } from "./templates.js";

export type { Dialect } from "./db.js";
export type { PlatformEvent } from "./events.js";
export type { SandboxChanges, SandboxListFilter } from "./sandboxes.js";
export type { CreatedKey } from "./teams.js";
export type { BuildChanges, NewBuild, TemplateTag } from "./templates.js";

/** The platform's store: one database, one repository per concern. */
export interface Store {
  db: Db;
  teams: TeamStore;
  templates: TemplateStore;
  sandboxes: SandboxStore;
  snapshots: SnapshotStore;
  events: EventStore;
  close(): Promise<void>;
}

export async function openStore(options: DbOptions): Promise<Store> {
  const db = await openDb(options);
  return {
    db,
    teams: new TeamStore(db.kysely),
    templates: new TemplateStore(db.kysely),
    sandboxes: new SandboxStore(db.kysely),
    snapshots: new SnapshotStore(db.kysely),
    events: new EventStore(db.kysely),
    close: () => db.close(),
  };
}
