export {
  type EntryInfo,
  EventType,
  type FilesystemEvent,
  FileType,
  type ProcessInfo,
} from "@x/envd-client";
export { type CommandConnectOptions, CommandHandle, type CommandStartOptions, Commands } from "./commands.js";
export type { ConnectionOptions } from "./config.js";
export {
  AuthenticationError,
  BuildError,
  type BuildFailure,
  CommandExitError,
  type CommandResult,
  ConflictError,
  InvalidArgumentError,
  NotEnoughSpaceError,
  NotFoundError,
  RateLimitError,
  SandboxError,
  type SandboxErrorCode,
  TimeoutError,
} from "./errors.js";
export {
  type ChunkedWriteOptions,
  type FileData,
  Filesystem,
  type FilesystemRequestOptions,
  type WatchHandle,
  type WatchOptions,
  type WriteEntry,
  type WriteInfo,
} from "./filesystem.js";
export { Pty, type PtyCreateOptions, type PtySize } from "./pty.js";
export {
  Sandbox,
  type SandboxConnectOptions,
  type SandboxCreateOptions,
  type SandboxForkOptions,
  type SandboxListOptions,
  type SnapshotInfo,
} from "./sandbox.js";
export { Secret, type SecretInfo, type SecretListOptions, type SecretWriteOptions } from "./secret.js";
export { Snapshot, type SnapshotListOptions } from "./snapshot.js";
export {
  type AssignedTags,
  type BuildInfo,
  type BuildLogEntry,
  type ListedTemplate,
  Template,
  type TemplateBuildOptions,
  type TemplateBuildRequest,
  type TemplateCopyOptions,
  type TemplateInfo,
  type TemplateOptions,
  type TemplateStep,
  type TemplateTag,
} from "./template.js";
export {
  Volume,
  type VolumeCreateOptions,
  type VolumeEntry,
  type VolumeWriteOptions,
} from "./volume.js";
