"""A Jupyter kernel behind the code interpreter's line protocol (src/kernels/protocol.ts).

Started as `python3 jupyter_bridge.py KERNEL_NAME [ARG...]` in the context's working directory.
Requests arrive as JSON lines on stdin; events go out as JSON lines on fd 3. The kernel itself
is started and spoken to with jupyter_client, as Jupyter's own servers do; extra arguments are
handed to the kernel's command line.
"""

import json
import os
import signal
import sys
import threading

from jupyter_client.manager import KernelManager

EVENTS = os.fdopen(3, "w", buffering=1, encoding="utf-8")
write_lock = threading.Lock()


def emit(event):
    line = json.dumps(event, ensure_ascii=False, default=str)
    with write_lock:
        EVENTS.write(line + "\n")
        EVENTS.flush()


def main():
    # the server interrupts through a request; a terminal's ^C must not end the bridge
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    name = sys.argv[1]
    km = KernelManager(kernel_name=name)
    km.start_kernel(cwd=os.getcwd(), env=dict(os.environ), extra_arguments=sys.argv[2:])
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
    except RuntimeError as err:
        emit({"ev": "fatal", "message": f"the {name} kernel did not start: {err}"})
        km.shutdown_kernel(now=True)
        return 1

    # Jupyter message id -> our execution id
    pending = {}
    pending_lock = threading.Lock()

    def relay():
        while True:
            try:
                msg = kc.get_iopub_msg(timeout=1)
            except Exception:  # queue.Empty: see whether the kernel still lives
                if not km.is_alive():
                    emit({"ev": "fatal", "message": f"the {name} kernel died"})
                    os._exit(1)
                continue
            parent = msg.get("parent_header", {}).get("msg_id")
            with pending_lock:
                ours = pending.get(parent)
            if ours is None:
                continue
            kind = msg["msg_type"]
            content = msg["content"]
            if kind == "stream":
                emit({"ev": "stream", "id": ours, "name": content["name"], "text": content["text"]})
            elif kind in ("execute_result", "display_data"):
                emit({"ev": "result", "id": ours, "main": kind == "execute_result", "data": content["data"]})
            elif kind == "error":
                emit(
                    {
                        "ev": "error",
                        "id": ours,
                        "name": content.get("ename", "Error"),
                        "value": content.get("evalue", ""),
                        "traceback": content.get("traceback", []),
                    }
                )
            elif kind == "execute_input":
                emit({"ev": "count", "id": ours, "n": content.get("execution_count")})
            elif kind == "status" and content.get("execution_state") == "idle":
                with pending_lock:
                    pending.pop(parent, None)
                # the server waits for these on stdout and stderr (protocol.ts endMarker)
                marker = "\0end:" + ours + "\0"
                sys.stdout.write(marker)
                sys.stdout.flush()
                sys.stderr.write(marker)
                sys.stderr.flush()
                emit({"ev": "done", "id": ours})

    threading.Thread(target=relay, daemon=True).start()
    emit({"ev": "ready"})

    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        op = req.get("op")
        if op == "execute":
            silent = bool(req.get("silent"))
            with pending_lock:
                msg_id = kc.execute(
                    req["code"], silent=silent, store_history=not silent, allow_stdin=False
                )
                pending[msg_id] = req["id"]
        elif op == "interrupt":
            km.interrupt_kernel()
        elif op == "shutdown":
            break
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
