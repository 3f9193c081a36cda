"""On a GPU: which users, /dev/shm folders and namespaces let one process open another's CUDA memory.

    python3 tools/device/ipc_probe.py --out $OUT/ipc-probe.json      # as root

The judge shares the timed calls' inputs with the learner's process through torch's CUDA IPC
(`grader.wire.protocol.encode_shared`). Each case starts an *exporter* (a tensor of 42s shared) and, from
it, an *importer* that opens the tensor and sums it, each as a given user, with the host's /dev/shm or
a tmpfs of the exporter's own, with or without the exporter handing its /dev/shm files to the
importer's user, and with the importer in new namespaces or not. A row says whether the sum came back,
or the importer's error, and the files /dev/shm held (owner and mode) after the export. The last part
tries, step by step, what `grader.learner.sandbox`'s namespace probe does, as uid 65534.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

NOBODY = 65534
CASES = [
    # name, exporter uid, importer uid, private /dev/shm, hand over (chown | chmod | None), importer namespaces
    ("root to root", 0, 0, False, None, ""),
    ("root to root in PID+IPC+mount namespaces", 0, 0, False, None, "pid ipc mnt"),
    ("root to nobody", 0, NOBODY, False, None, ""),
    ("root to nobody, private shm, chown", 0, NOBODY, True, "chown", ""),
    ("root to nobody, private shm, chmod 666", 0, NOBODY, True, "chmod", ""),
    ("nobody to nobody, private shm", NOBODY, NOBODY, True, None, ""),
    ("nobody to nobody, private shm, importer in PID+IPC+mount namespaces (as root, then nobody)", NOBODY, NOBODY, True,
     None, "pid ipc mnt"),
    ("nobody to nobody in a user namespace", NOBODY, NOBODY, False, None, "user pid ipc mnt"),
]
CLONE = {"mnt": 0x00020000, "ipc": 0x08000000, "user": 0x10000000, "pid": 0x20000000}
libc = ctypes.CDLL(None, use_errno=True)


def _unshare(flags: int) -> None:
    if libc.unshare(ctypes.c_int(flags)) != 0:
        raise OSError(ctypes.get_errno(), f"unshare {flags:#x}: {os.strerror(ctypes.get_errno())}")


def _mount_tmpfs(target: str) -> None:
    if libc.mount(b"tmpfs", target.encode(), b"tmpfs", ctypes.c_ulong(6), b"size=64m,mode=1777") != 0:
        raise OSError(ctypes.get_errno(), f"mount {target}: {os.strerror(ctypes.get_errno())}")


def _private_mounts() -> None:
    if libc.mount(None, b"/", None, ctypes.c_ulong((1 << 14) | (1 << 18)), None) != 0:
        raise OSError(ctypes.get_errno(), "mount --make-rprivate /")


def _become(uid: int) -> None:
    if uid and os.geteuid() != uid:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)


def _shm() -> list[str]:
    rows = []
    for name in sorted(os.listdir("/dev/shm")):
        try:
            info = os.lstat(f"/dev/shm/{name}")
            rows.append(f"{name} uid={info.st_uid} mode={oct(info.st_mode & 0o777)}")
        except OSError:
            pass
    return rows


def importer(uid: int, namespaces: str) -> None:
    flags = sum(CLONE[n] for n in namespaces.split())
    said: dict = {}
    try:
        if flags:
            if "user" in namespaces:
                _become(uid)
                _unshare(flags)
                with open("/proc/self/setgroups", "w") as f:
                    f.write("deny")
                with open("/proc/self/uid_map", "w") as f:
                    f.write(f"{uid} {uid} 1")
                with open("/proc/self/gid_map", "w") as f:
                    f.write(f"{uid} {uid} 1")
            else:
                _unshare(flags)
            if "pid" in namespaces:  # the new PID namespace holds this process's children: fork once
                pid = os.fork()
                if pid:
                    _, status = os.waitpid(pid, 0)
                    os._exit(os.waitstatus_to_exitcode(status))
        _become(uid)
        import pickle

        import torch
        from torch.multiprocessing import reductions

        args = pickle.loads(sys.stdin.buffer.read())
        tensor = reductions.rebuild_cuda_tensor(*args)
        said["sum"] = float(tensor.sum())
        said["uid"] = os.geteuid()
    except BaseException as exc:  # noqa: BLE001
        said["error"] = f"{type(exc).__name__}: {exc}"[:600]
    said["shm_seen"] = _shm()[:12]
    print(json.dumps(said), flush=True)
    os._exit(0)


def exporter(case: list) -> None:
    name, exp_uid, imp_uid, private, hand, namespaces = case
    said: dict = {"case": name}
    try:
        if private:
            _unshare(CLONE["mnt"])
            _private_mounts()
            _mount_tmpfs("/dev/shm")
        _become(exp_uid)
        import pickle

        import torch
        from torch.multiprocessing import reductions

        tensor = torch.full((1 << 20,), 42.0, device="cuda")
        _, args = reductions.reduce_tensor(tensor)
        payload = pickle.dumps(args)
        torch.cuda.synchronize()
        if hand and os.geteuid() == 0:
            for entry in os.listdir("/dev/shm"):
                path = f"/dev/shm/{entry}"
                if hand == "chown":
                    os.chown(path, imp_uid, imp_uid)
                else:
                    os.chmod(path, 0o666)
        said["shm_after_export"] = _shm()[:12]
        done = subprocess.run([sys.executable, __file__, "--importer", str(imp_uid), namespaces], input=payload,
                              capture_output=True, timeout=120)
        lines = done.stdout.decode(errors="replace").strip().splitlines()
        said["importer"] = json.loads(lines[-1]) if lines else {"error": done.stderr.decode(errors="replace")[-600:]}
        said["importer_stderr"] = done.stderr.decode(errors="replace")[-400:]
        said["shm_after_import"] = _shm()[:12]
        said["ok"] = said["importer"].get("sum") == 42.0 * (1 << 20)
    except BaseException as exc:  # noqa: BLE001
        said["error"] = f"{type(exc).__name__}: {exc}"[:600]
    print(json.dumps(said), flush=True)
    os._exit(0)


def namespace_steps(uid: int) -> list[str]:
    """`grader.learner.sandbox._probe_namespaces`'s steps as ``uid``, each with what it said."""
    code = r'''
import os, sys
sys.path.insert(0, %r)
from grader.learner import sandbox as s
steps = []
def step(what, fn):
    try:
        fn(); steps.append(what + ": ok")
    except BaseException as exc:
        steps.append(f"{what}: {type(exc).__name__}: {exc}"); print("\n".join(steps)); sys.exit()
os.setgroups([]); os.setresgid(%d, %d, %d); os.setresuid(%d, %d, %d)
flags = s.CLONE_NEWNS | s.CLONE_NEWIPC | s.CLONE_NEWPID | s.CLONE_NEWNET | s.CLONE_NEWUSER
step("unshare user+mnt+ipc+pid+net", lambda: s._unshare(flags))
step("map user", lambda: s._map_user(%d, %d))
step("make / private", lambda: s._mount(None, "/", None, s.MS_REC | s.MS_PRIVATE))
step("mount_setattr / read-only", lambda: s._mount_setattr("/", set_=s.MOUNT_ATTR_RDONLY))
print("\n".join(steps))
''' % ((os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), *(uid,) * 8)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return (done.stdout + done.stderr).strip().splitlines()


def main() -> int:
    if sys.argv[1:2] == ["--importer"]:
        importer(int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "")
    if sys.argv[1:2] == ["--exporter"]:
        exporter(json.loads(sys.argv[2]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rows = []
    for case in CASES:
        started = time.monotonic()
        done = subprocess.run([sys.executable, __file__, "--exporter", json.dumps(case)], capture_output=True, text=True,
                              timeout=200)
        lines = done.stdout.strip().splitlines()
        row = json.loads(lines[-1]) if lines else {"case": case[0], "error": done.stderr[-600:]}
        row["seconds"] = round(time.monotonic() - started, 1)
        rows.append(row)
        print(f"{case[0]:<95} ok={row.get('ok')} {row.get('error') or row.get('importer', {}).get('error') or ''}"[:400],
              flush=True)
    steps = namespace_steps(NOBODY)
    print("namespace probe as uid 65534:", *steps, sep="\n  ")
    with open(args.out, "w") as f:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        from tools.device import provenance

        json.dump({"meta": provenance.header(), "rows": rows,
                   "namespace_probe_as_nobody": steps}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
