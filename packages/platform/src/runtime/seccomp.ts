/**
 * A deny-list seccomp profile modelled on Docker's default: everything is allowed except the
 * syscalls Docker refuses to root without CAP_SYS_ADMIN & co. Only runc applies it; gVisor is
 * its own syscall boundary and ignores OCI seccomp unless told otherwise.
 */

const EPERM = 1;
const ENOSYS = 38;
const CLONE_NEWUSER = 0x10000000;

const DENIED = [
  "acct",
  "add_key",
  "bpf",
  "clock_adjtime",
  "clock_settime",
  "create_module",
  "delete_module",
  "finit_module",
  "fsconfig",
  "fsmount",
  "fsopen",
  "fspick",
  "get_kernel_syms",
  "init_module",
  "ioperm",
  "iopl",
  "kexec_file_load",
  "kexec_load",
  "keyctl",
  "lookup_dcookie",
  "mount",
  "move_mount",
  "name_to_handle_at",
  "nfsservctl",
  "open_by_handle_at",
  "open_tree",
  "perf_event_open",
  "pivot_root",
  "query_module",
  "quotactl",
  "reboot",
  "request_key",
  "setns",
  "settimeofday",
  "stime",
  "swapoff",
  "swapon",
  "sysfs",
  "_sysctl",
  "umount",
  "umount2",
  "unshare",
  "uselib",
  "userfaultfd",
  "ustat",
  "vm86",
  "vm86old",
];

export interface SeccompProfile {
  defaultAction: string;
  architectures: string[];
  syscalls: Array<{
    names: string[];
    action: string;
    errnoRet?: number;
    args?: Array<{ index: number; value: number; valueTwo: number; op: string }>;
  }>;
}

export function defaultSeccomp(): SeccompProfile {
  return {
    defaultAction: "SCMP_ACT_ALLOW",
    architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
    syscalls: [
      { names: DENIED, action: "SCMP_ACT_ERRNO", errnoRet: EPERM },
      // user namespaces would hand the sandbox a fresh set of capabilities to attack the kernel with
      {
        names: ["clone"],
        action: "SCMP_ACT_ERRNO",
        errnoRet: EPERM,
        args: [{ index: 0, value: CLONE_NEWUSER, valueTwo: CLONE_NEWUSER, op: "SCMP_CMP_MASKED_EQ" }],
      },
      // clone3 passes its flags in memory seccomp cannot read; ENOSYS makes libc fall back to clone
      { names: ["clone3"], action: "SCMP_ACT_ERRNO", errnoRet: ENOSYS },
    ],
  };
}
