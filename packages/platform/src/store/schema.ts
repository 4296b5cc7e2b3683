/**
 * Tables of the platform store. The same schema serves SQLite and PostgreSQL, so column types
 * stay portable: times are ISO-8601 UTC text (sortable as text), booleans are 0/1 integers,
 * structured values are JSON text.
 */
export interface Database {
  teams: TeamsTable;
  api_keys: ApiKeysTable;
  templates: TemplatesTable;
  template_aliases: TemplateAliasesTable;
  builds: BuildsTable;
  build_logs: BuildLogsTable;
  template_tags: TemplateTagsTable;
  sandboxes: SandboxesTable;
  snapshots: SnapshotsTable;
  volumes: VolumesTable;
  events: EventsTable;
  nodes: NodesTable;
  layers: LayersTable;
  layer_copies: LayerCopiesTable;
  placements: PlacementsTable;
  create_tickets: CreateTicketsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_cursor: WebhookCursorTable;
  secrets: SecretsTable;
  secret_versions: SecretVersionsTable;
}

/** A team's secret (store/secrets.ts); its values are in `secret_versions`. */
export interface SecretsTable {
  id: string;
  team_id: string;
  /** Normalised (trimmed, lower case); unique within the team. */
  name: string;
  current_version: number;
  /** JSON object of string values. */
  metadata: string;
  created_at: string;
  updated_at: string;
}

/** One version of a secret's value, sealed (AES-256-GCM, the secret's id and version as associated data). */
export interface SecretVersionsTable {
  secret_id: string;
  version: number;
  /** Which key sealed it (a fingerprint, never the key): a wrong key is named as such. */
  key_id: string;
  /** base64 of the 12-byte nonce. */
  nonce: string;
  /** base64 of the ciphertext and its 16-byte tag. */
  ciphertext: string;
  created_at: string;
}

/** A team's lifecycle webhook (store/webhooks.ts). */
export interface WebhooksTable {
  id: string;
  team_id: string;
  name: string;
  url: string;
  enabled: number;
  /** JSON array of the event types it is sent. */
  events: string;
  /** As given: it signs every delivery, so it is kept (never logged, never answered). */
  signature_secret: string;
  created_at: string;
  updated_at: string;
}

/** One event for one webhook: the outbox row the sender works through, until delivered or given up. */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  /** The JSON body, fixed when the delivery is made: every attempt sends the same bytes. */
  payload: string;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  /** When pending: when it is due (or when a sender's claim on it lapses). */
  next_attempt_at: string;
  created_at: string;
  finished_at: string | null;
}

/** One attempt at a delivery: the webhook's delivery log. */
export interface WebhookAttemptsTable {
  /** The attempt's `e2b-delivery-id`; time-ordered. */
  id: string;
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  outcome: "delivered" | "retrying" | "failed";
}

/** How far the dispatcher has read `events` (one row, `fanout`). */
export interface WebhookCursorTable {
  name: string;
  event_id: string;
}

/** Hosts of the `x node` role (beyond one machine); `x serve` is the one node `local` and has no row. */
export interface NodesTable {
  id: string;
  state: "ready" | "draining" | "down";
  /** Where the node's API answers (the api role forwards there). */
  api_url: string;
  /** Where the node's entry for its sandboxes' traffic answers (the proxy role forwards there). */
  traffic_url: string;
  started_at: string;
  heartbeat_at: string;
  down_at: string | null;
  /** JSON NodeCapacity, from the last heartbeat. */
  capacity: string;
}

/** Template and snapshot layers by path (relative to a data directory), with their content digest. */
export interface LayersTable {
  path: string;
  /** sha256 of the layer's canonical tar stream (see cluster/layer-transfer.ts). */
  digest: string;
  bytes: number;
  created_at: string;
}

/** Which nodes hold a copy of a layer. */
export interface LayerCopiesTable {
  path: string;
  node_id: string;
}

/** Sandboxes an api has sent to a node and not yet seen created: counted against its headroom. */
export interface PlacementsTable {
  id: string;
  node_id: string;
  memory_mb: number;
  expires_at: string;
}

/** A create an api sent to a node, until the api has its answer (store/create-tickets.ts). */
export interface CreateTicketsTable {
  key: string;
  team_id: string;
  node_id: string;
  /** The sandbox the node began for it (null until it began one). */
  sandbox_id: string | null;
  /** 1 once the node finished the sandbox: from then on it is the create's, and stays. */
  done: number;
  created_at: string;
}

/** A team's key for a create safe to retry, and the create it binds to (store/idempotency-keys.ts). */
export interface IdempotencyKeysTable {
  team_id: string;
  key: string;
  /** sha256 of the operation and its body: the same key with another request is refused. */
  request_hash: string;
  /** The create ticket of the attempt that holds the key (create_tickets.key). */
  ticket: string;
  /** The sandbox it made (null while it is making one): from then on the key answers with it. */
  sandbox_id: string | null;
  /** The holder renews this while its attempt runs; past it, the holder is taken for gone. */
  lease_until: string;
  created_at: string;
  /** A day after created_at: the key may make another sandbox from then on (and the row is swept). */
  expires_at: string;
}

export interface TeamsTable {
  id: string;
  name: string;
  /** Prefix of the team's template names: `namespace/alias`. */
  namespace: string;
  created_at: string;
  /** The team's limits; null: the platform's own (`x team limits`). */
  limit_sandboxes: number | null;
  limit_cpu_count: number | null;
  limit_memory_mb: number | null;
  limit_disk_mb: number | null;
  limit_timeout_s: number | null;
  limit_volumes: number | null;
  limit_volume_size_mb: number | null;
  limit_templates: number | null;
  limit_snapshots: number | null;
  limit_fork_count: number | null;
  limit_uploads: number | null;
  limit_uploads_mb: number | null;
}

export interface ApiKeysTable {
  id: string;
  team_id: string;
  name: string;
  /** sha256 of the key; the key itself is shown once and never stored. */
  key_hash: string;
  /** First and last characters, so people can tell their keys apart. */
  key_mask: string;
  created_at: string;
  last_used_at: string | null;
  /**
   * An API key (`X-API-Key`), an access token (`Authorization: Bearer`), or the refresh token
   * of an access token (`POST /oauth/token`; it opens nothing else).
   */
  kind: "api_key" | "access_token" | "refresh_token";
  /**
   * The access token this was made for: the key `GET /teams` made (one per token), or the
   * token's refresh token. Revoking the token revokes these.
   */
  minted_by: string | null;
}

export interface TemplatesTable {
  id: string;
  team_id: string;
  public: number;
  created_at: string;
  updated_at: string;
  last_spawned_at: string | null;
  spawn_count: number;
  /** The template's own warm pool bounds; null: the platform's defaults. */
  pool_min: number | null;
  pool_max: number | null;
}

export interface TemplateAliasesTable {
  /** Unique per team namespace: the full name is `namespace/alias`. */
  namespace: string;
  alias: string;
  template_id: string;
}

export interface BuildsTable {
  id: string;
  template_id: string;
  status: "waiting" | "building" | "ready" | "error";
  /** JSON `{message, step?}` when status is error. */
  reason: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  cpu_count: number;
  memory_mb: number;
  disk_size_mb: number;
  envd_version: string;
  /** JSON: what to build (steps, start and ready commands, base). */
  spec: string;
  /** JSON: layers, topmost first, once built. */
  layers: string | null;
  /** `files` for a filesystem build, `memory` when a checkpoint image is kept with it. */
  snapshot_kind: string | null;
  /** The node that builds (built) it, where its uploads and new layers are. */
  node_id: string;
}

export interface BuildLogsTable {
  build_id: string;
  seq: number;
  timestamp: string;
  level: string;
  message: string;
  step: string | null;
}

export interface TemplateTagsTable {
  template_id: string;
  tag: string;
  build_id: string;
  created_at: string;
}

export interface SandboxesTable {
  id: string;
  team_id: string;
  template_id: string;
  build_id: string;
  alias: string | null;
  state: "starting" | "running" | "paused" | "error" | "lost" | "killed";
  pause_kind: "frozen" | "checkpointed" | "stopped" | null;
  runtime: "runsc" | "runc";
  started_at: string;
  end_at: string;
  cpu_count: number;
  memory_mb: number;
  disk_size_mb: number;
  /** JSON object of string values. */
  metadata: string;
  /** JSON object of string values. */
  env_vars: string;
  envd_access_token: string;
  /** JSON EgressPolicy; null: open. */
  egress: string | null;
  /** JSON IngressPolicy; null: public. */
  ingress: string | null;
  traffic_access_token: string | null;
  auto_pause: number;
  auto_pause_memory: number;
  auto_resume: number;
  killed_at: string | null;
  /** Why a sandbox in state `error` broke. */
  reason: string | null;
  /** JSON array of VolumeMount; null: none. */
  volume_mounts: string | null;
  /** JSON IdentityTokens (`iam.tokens`); null: none. */
  identity_tokens: string | null;
  /** The node that runs it. */
  node_id: string;
}

export interface VolumesTable {
  id: string;
  team_id: string;
  name: string;
  size_mb: number;
  token: string;
  created_at: string;
  /** The node whose disk holds the volume's image. */
  node_id: string;
}

export interface SnapshotsTable {
  id: string;
  team_id: string;
  sandbox_id: string;
  template_id: string;
  build_id: string;
  created_at: string;
}

export interface EventsTable {
  /** Time-ordered: sorting by id is sorting by time. */
  id: string;
  at: string;
  team_id: string | null;
  sandbox_id: string | null;
  type: string;
  /** JSON details. */
  data: string;
}

// Row types stay inside the store: every repository decodes them into the model's records.
