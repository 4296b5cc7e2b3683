import type { EnvdClient } from "@x/envd-client";
import { useMemo } from "react";
import { useSearchParams } from "react-router-dom";
import { FileBrowser } from "../../components/files/file-browser.js";
import type { FileSource } from "../../components/files/file-source.js";
import { useEnvd } from "../../envd/client.js";
import { envdErrorMessage } from "../../envd/errors.js";
import { eventName, listDir, makeDir, readFile, removePath, watchDir, writeFile } from "../../envd/files.js";
import { NotRunning } from "./not-running.js";
import { useSandboxContext } from "./sandbox-layout.js";

const HOME = "/home/user";

/** A sandbox's files through envd: Connect for listing, watching and removing, HTTP for bytes. */
function sandboxSource(sandboxID: string, envd: EnvdClient): FileSource {
  return {
    key: `sandbox:${sandboxID}`,
    home: HOME,
    list: (path, signal) => listDir(envd, path, signal),
    read: (path) => readFile(envd, path),
    write: (path, data) => writeFile(envd, path, data),
    makeDir: (path) => makeDir(envd, path),
    remove: (path) => removePath(envd, path),
    watch: (path, handlers, signal) =>
      watchDir(
        envd,
        path,
        { onEvent: (e) => handlers.onChange(`${eventName(e)} ${e.name}`), onEnd: handlers.onEnd },
        signal,
      ),
    describeError: envdErrorMessage,
  };
}

/** The sandbox's files: browse, upload, download, edit, and see changes as they happen. */
export default function FilesTab() {
  const sandbox = useSandboxContext();
  const envd = useEnvd(sandbox);
  const [params, setParams] = useSearchParams();
  const path = params.get("path") || HOME;
  const source = useMemo(
    () => (envd ? sandboxSource(sandbox.sandboxID, envd) : undefined),
    [envd, sandbox.sandboxID],
  );
  if (!source) return <NotRunning sandbox={sandbox} what="browse its files" />;
  return <FileBrowser source={source} path={path} onPath={(p) => setParams({ path: p })} />;
}
