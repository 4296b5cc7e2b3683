/** A snapshot of a sandbox: a build of a snapshot template. */
export interface Snapshot {
  id: string;
  teamId: string;
  sandboxId: string;
  templateId: string;
  buildId: string;
  createdAt: string;
}

/** A snapshot with the tags that currently point at its build. */
export interface ListedSnapshot extends Snapshot {
  tags: string[];
}
