import { CLONE_NAMESPACE_FLAGS, defaultSeccomp } from "./seccomp.js";

const profile = defaultSeccomp();
/** Names allowed whatever their arguments. */
const allowed = new Set(
  profile.syscalls.filter((r) => r.action === "SCMP_ACT_ALLOW" && !r.args).flatMap((r) => r.names),
);
const rulesFor = (name: string) => profile.syscalls.filter((r) => r.names.includes(name));

test("refuses what it does not list, with EPERM, on x86_64 alone", () => {
  expect(profile).toMatchObject({
    defaultAction: "SCMP_ACT_ERRNO",
    defaultErrnoRet: 1,
    architectures: ["SCMP_ARCH_X86_64"],
  });
});

test("lists none of the system calls Docker keeps from containers, nor io_uring", () => {
  const refused = [
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "mount",
    "umount2",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "pivot_root",
    "unshare",
    "setns",
    "open_by_handle_at",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "iopl",
    "ioperm",
    "settimeofday",
    "clock_settime",
    "pidfd_getfd",
    "kcmp",
    "process_madvise",
    "vhangup",
    "fanotify_init",
    "lookup_dcookie",
  ];
  for (const name of refused) expect({ name, rules: rulesFor(name) }).toEqual({ name, rules: [] });
});

test("clones only without namespace flags; clone3, whose flags it cannot read, is ENOSYS", () => {
  expect(rulesFor("clone")).toEqual([
    {
      names: ["clone"],
      action: "SCMP_ACT_ALLOW",
      args: [{ index: 0, value: CLONE_NAMESPACE_FLAGS, valueTwo: 0, op: "SCMP_CMP_MASKED_EQ" }],
    },
  ]);
  // CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
  for (const flag of [0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000]) {
    expect(CLONE_NAMESPACE_FLAGS & flag).toBe(flag);
  }
  // fork's and pthread_create's flags pass
  const thread = 0x3d0f00; // CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID
  expect(thread & CLONE_NAMESPACE_FLAGS).toBe(0);
  expect(rulesFor("clone3")).toEqual([{ names: ["clone3"], action: "SCMP_ACT_ERRNO", errnoRet: 38 }]);
});

test("sockets of every family but AF_VSOCK; personality only as Docker allows it", () => {
  expect(rulesFor("socket")).toEqual([
    { names: ["socket"], action: "SCMP_ACT_ALLOW", args: [{ index: 0, value: 40, op: "SCMP_CMP_NE" }] },
  ]);
  expect(rulesFor("personality").map((r) => r.args)).toEqual(
    [0x0, 0x8, 0x20000, 0x20008, 0xffffffff].map((value) => [{ index: 0, value, op: "SCMP_CMP_EQ" }]),
  );
});

test("allows what Node, Python, bash, apt, git, sudo and debuggers call", () => {
  const needed = [
    // Node and libuv
    "epoll_create1",
    "epoll_ctl",
    "epoll_pwait",
    "eventfd2",
    "futex",
    "statx",
    "getrandom",
    "rseq",
    "sched_getaffinity",
    "pipe2",
    "prlimit64",
    "memfd_create",
    "madvise",
    "mprotect",
    // processes: bash, tini, envd's spawns
    "execve",
    "wait4",
    "waitid",
    "vfork",
    "setsid",
    "setpgid",
    "rt_sigaction",
    "rt_sigtimedwait",
    "prctl",
    "pidfd_open",
    "close_range",
    // sudo, su, apt's _apt sandbox
    "setresuid",
    "setresgid",
    "setgroups",
    "capget",
    "capset",
    "chroot",
    // files: apt, dpkg, git, pip
    "openat",
    "openat2",
    "newfstatat",
    "renameat2",
    "linkat",
    "symlinkat",
    "fchownat",
    "fchmodat",
    "utimensat",
    "fallocate",
    "copy_file_range",
    "fsync",
    "flock",
    "getdents64",
    "inotify_add_watch",
    "setxattr",
    "mknodat", // FIFOs; device nodes stay refused without CAP_MKNOD
    // network
    "connect",
    "sendmmsg",
    "recvmmsg",
    "accept4",
    // debuggers
    "ptrace",
    "process_vm_readv",
    "arch_prctl",
  ];
  expect(needed.filter((n) => !allowed.has(n))).toEqual([]);
});

test("names each system call once, in the kernel's spelling", () => {
  const names = profile.syscalls.find((r) => r.action === "SCMP_ACT_ALLOW" && !r.args)!.names;
  expect(new Set(names).size).toBe(names.length);
  for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
});
