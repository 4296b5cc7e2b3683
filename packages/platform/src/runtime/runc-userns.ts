import { randomInt } from "node:crypto";
import { closeSync, lstatSync, statSync } from "node:fs";
import { chown, lstat, mkdir, readdir, readFile, rmdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { idmap } from "../lib/host-native.js";
import type { BindMount, UserNamespace } from "./oci-spec.js";

/**
 * runc sandboxes run in a user namespace of their own: root inside is not root on the host.
 *
 * Host ids: each sandbox's boot gets 65,536 host uids and gids of its own (container 0..65535)
 * in 0x70000000..0x7FFDFFFF, which systemd's table of ranges leaves unused: above the container
 * ranges of systemd-nspawn (to 0x6FFFFFFF), /etc/subuid's (useradd's end at 600,100,000) and
 * every account, below systemd's "foreign" range (0x7FFE0000) and below 2^31, past which tools
 * such as ps print ids as negative numbers. So no host account owns anything a sandbox's
 * process is, and two sandboxes are never the same host user: an escape from one could
 * neither signal nor ptrace another's processes, and per-user kernel limits (pipe buffers,
 * epoll watches) are each sandbox's own.
 *
 * Files stay unshifted on disk: root's files are uid 0 in the sandbox's upper layer, as in the
 * template layers, so a layer boots the same under runc and gVisor (a runc sandbox snapshotted
 * becomes a template gVisor boots). The kernel translates through idmapped mounts
 * (native/idmap.c): every layer and the sandbox's disk are cloned with the namespace's mapping,
 * the overlay is made of those clones, and volumes are bound the same way.
 *
 * The view (the overlay runc is given, the sysfs of the sandbox's netns, the volumes) lives under
 * /run/x-runc/<slot>, a directory only the sandbox's root (and the host's) may enter: runc's
 * init and its hooks reach the rootfs by path from inside the namespace, and the data dir is
 * the host root's alone. The directory is the slot's lease: made with mkdir (a host's platforms
 * never share a slot), recorded in the sandbox's own directory, removed when the sandbox stops.
 */
export const USERNS_SIZE = 65_536;
export const USERNS_FIRST_HOST_ID = 0x7000_0000;
/** Slots of USERNS_SIZE ids from USERNS_FIRST_HOST_ID up to systemd's foreign range (4,094). */
export const USERNS_SLOTS = (0x7ffe_0000 - USERNS_FIRST_HOST_ID) / USERNS_SIZE;
export const RUNC_VIEWS_DIR = "/run/x-runc";

/** The file in a sandbox's directory naming its lease. */
const RECORD = "runc-view";
/** A lease not in use this long is a leftover (of a host reboot or a crash mid-boot). */
const STALE_AFTER_MS = 60_000;
const CLAIM_ATTEMPTS = 64;

export function slotNamespace(slot: number): UserNamespace {
  return { hostId: USERNS_FIRST_HOST_ID + slot * USERNS_SIZE, size: USERNS_SIZE };
}

export interface RuncView {
  /** The lease: /run/x-runc/<slot>. */
  dir: string;
  slot: number;
  userNamespace: UserNamespace;
  /** The root filesystem runc is given. */
  rootfs: string;
  /** A sysfs of the sandbox's netns, for /sys. */
  sysfs: string;
  /** The binds asked for, their sources replaced by idmapped views. */
  binds: BindMount[];
}

export interface RuncViewOptions {
  /** The sandbox's own directory on the data dir: the lease is recorded there. */
  sandboxDir: string;
  /** Template layers, topmost first. */
  lowers: string[];
  /** The directory (the sandbox's disk) holding the upper layer and the overlay's work dir. */
  disk: string;
  /** Names of those two in `disk`. */
  upper: string;
  work: string;
  /** The sandbox's network namespace (/run/netns/NAME). */
  netnsPath: string;
  /** Binds of the sandbox's own files (volumes): shown through the namespace's mapping. */
  binds: BindMount[];
  /**
   * The host's own overlay of the same upper layer (through which the host prepared it):
   * unmounted first, as one upper layer serves one overlay at a time.
   */
  hostMount?: string;
}

/**
 * ICMP datagram sockets ("ping" without CAP_NET_RAW) for the sandbox's groups, and every port
 * bindable: root inside has no capability over the netns, which belongs to the host's user
 * namespace (so nf_tables & co. stay out of its reach). Docker sets the same.
 */
function netnsSettings(ns: UserNamespace): string[] {
  return [
    `ipv4.ping_group_range=${ns.hostId} ${ns.hostId + ns.size - 1}`,
    "ipv4.ip_unprivileged_port_start=0",
  ];
}

export class RuncViews {
  constructor(private readonly root = RUNC_VIEWS_DIR) {}

  /** Mounts the sandbox's view under a new lease (a previous one of the sandbox goes first). */
  async open(o: RuncViewOptions): Promise<RuncView> {
    // not lazily: a host mount still in use would make two overlays of one upper layer
    if (o.hostMount) idmap().unmount(path.resolve(o.hostMount), false);
    await this.close(o.sandboxDir);
    const { dir, slot } = await this.claim(o.sandboxDir);
    const ns = slotNamespace(slot);
    const view: RuncView = {
      dir,
      slot,
      userNamespace: ns,
      rootfs: path.join(dir, "rootfs"),
      sysfs: path.join(dir, "sys"),
      binds: o.binds.map((b, i) => ({ ...b, source: path.join(dir, "volumes", String(i)) })),
    };
    let usernsFd: number | undefined;
    try {
      await mkdir(view.rootfs);
      await mkdir(view.sysfs);
      for (const b of view.binds) await mkdir(b.source, { recursive: true });
      // the namespace's root reaches its rootfs by path (runc's init, the boot-id hook)
      await chown(dir, ns.hostId, ns.hostId);
      const native = idmap();
      usernsFd = native.userns(ns.hostId, ns.size);
      native.idmappedOverlay({
        lowers: o.lowers.map((l) => path.resolve(l)),
        disk: path.resolve(o.disk),
        upper: o.upper,
        work: o.work,
        target: view.rootfs,
        scratch: path.join(dir, "layers"),
        usernsFd,
        hostId: ns.hostId,
        // set-id works here (sudo) and nowhere else: only the sandbox's root can enter `dir`,
        // and through the mapping a set-uid-root file of the sandbox is the sandbox's root
        suid: true,
      });
      native.sysfsInNetns(o.netnsPath, view.sysfs);
      native.netSysctlsInNetns(o.netnsPath, netnsSettings(ns));
      o.binds.forEach((b, i) => {
        native.idmappedBind(b.source, view.binds[i]!.source, usernsFd!, b.readonly ?? false);
      });
      return view;
    } catch (err) {
      await this.close(o.sandboxDir).catch(() => undefined);
      throw new Error(
        `the runc sandbox's view of its files could not be made (user namespaces with idmapped mounts need Linux 5.19 or later, and root on the host): ${(err as Error).message}`,
        { cause: err },
      );
    } finally {
      if (usernsFd !== undefined) closeSync(usernsFd);
    }
  }

  /** Unmounts the sandbox's view and gives its lease back; none is fine. */
  async close(sandboxDir: string): Promise<void> {
    const record = path.join(sandboxDir, RECORD);
    const dir = await readFile(record, "utf8").catch(ignoreMissing);
    if (dir === undefined) return;
    // a lease taken over since (it was left stale) is another sandbox's now: not touched
    const owner = await readFile(path.join(dir, "owner"), "utf8").catch(ignoreMissing);
    if (owner === sandboxDir) await removeLease(dir);
    await unlink(record).catch(ignoreMissing);
  }

  /** Every lease whose owner (a sandbox's directory) `mine` claims: unmounted and given back. */
  async sweep(mine: (sandboxDir: string) => boolean): Promise<string[]> {
    const swept: string[] = [];
    for (const name of await readdir(this.root).catch(() => [] as string[])) {
      const dir = path.join(this.root, name);
      const owner = await readFile(path.join(dir, "owner"), "utf8").catch(ignoreMissing);
      if (owner === undefined || !mine(owner)) continue;
      await removeLease(dir);
      await unlink(path.join(owner, RECORD)).catch(ignoreMissing);
      swept.push(dir);
    }
    return swept;
  }

  private async claim(sandboxDir: string): Promise<{ dir: string; slot: number }> {
    await mkdir(this.root, { recursive: true, mode: 0o711 });
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const slot = randomInt(USERNS_SLOTS);
      const dir = path.join(this.root, String(slot));
      if (!(await makeLease(dir))) {
        if (!isStale(dir)) continue;
        await removeLease(dir);
        if (!(await makeLease(dir))) continue;
      }
      // recorded before anything is mounted: a crash from here on leaves what close() finds
      await writeFile(path.join(sandboxDir, RECORD), dir);
      await writeFile(path.join(dir, "owner"), sandboxDir);
      return { dir, slot };
    }
    throw new Error(
      `no free user-namespace range for a runc sandbox after ${CLAIM_ATTEMPTS} tries (leases in ${this.root})`,
    );
  }
}

async function makeLease(dir: string): Promise<boolean> {
  try {
    await mkdir(dir, { mode: 0o700 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

/** A lease whose rootfs is not mounted and that is older than a boot takes. */
function isStale(dir: string): boolean {
  try {
    const lease = statSync(dir);
    const rootfs = lstatSync(path.join(dir, "rootfs"), { throwIfNoEntry: false });
    const mounted = rootfs !== undefined && rootfs.dev !== lease.dev;
    return !mounted && Date.now() - lease.mtimeMs > STALE_AFTER_MS;
  } catch {
    return false;
  }
}

/**
 * Unmounts what is mounted in a lease and removes it, by rmdir and unlink only: should anything
 * still be mounted there, removal stops at it and never reaches into a sandbox's files.
 */
async function removeLease(dir: string): Promise<void> {
  const native = idmap();
  const volumes = path.join(dir, "volumes");
  const volumeDirs = (await readdir(volumes).catch(() => [] as string[])).map((n) => path.join(volumes, n));
  for (const target of [...volumeDirs, path.join(dir, "sys"), path.join(dir, "rootfs")]) {
    native.unmount(target, true);
  }
  for (const d of volumeDirs) await rmdir(d).catch(ignoreMissing);
  await rmdir(volumes).catch(ignoreMissing);
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const entry = path.join(dir, name);
    const info = await lstat(entry).catch(ignoreMissing);
    if (!info) continue;
    await (info.isDirectory() ? rmdir(entry) : unlink(entry)).catch(ignoreMissing);
  }
  await rmdir(dir).catch(ignoreMissing);
}

function ignoreMissing(err: NodeJS.ErrnoException): undefined {
  if (err.code === "ENOENT") return undefined;
  throw err;
}
