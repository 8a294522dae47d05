#!/usr/bin/env python3
"""Build a container image as a docker-archive tarball (what `docker save`
writes, and `ctr images import` reads), from local files only: the e2e
guests reach no registry.

    mkoci.py OUT.tar REF [--entrypoint JSON] [--cmd JSON] [--env K=V]...
             [--file SRC=DEST]... [--link DEST=TARGET]... [--dir DEST]...

One layer holding the files (mode kept, owner root, mtime 0, so the same
inputs give the same image id), the config, manifest.json naming REF.
"""
import argparse
import hashlib
import io
import json
import os
import sys
import tarfile


def add_dirs(tar, seen, path):
    parts = path.strip("/").split("/")[:-1]
    for i in range(len(parts)):
        d = "/".join(parts[: i + 1])
        if d in seen:
            continue
        seen.add(d)
        ti = tarfile.TarInfo(d)
        ti.type = tarfile.DIRTYPE
        ti.mode = 0o755
        tar.addfile(ti)


def layer(args):
    buf = io.BytesIO()
    seen = set()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for d in args.dir:
            add_dirs(tar, seen, d.rstrip("/") + "/x")
        for spec in args.file:
            src, dest = spec.split("=", 1)
            add_dirs(tar, seen, dest)
            st = os.stat(src)
            ti = tarfile.TarInfo(dest.lstrip("/"))
            ti.size = st.st_size
            ti.mode = st.st_mode & 0o7777
            with open(src, "rb") as f:
                tar.addfile(ti, f)
        for spec in args.link:
            dest, target = spec.split("=", 1)
            add_dirs(tar, seen, dest)
            ti = tarfile.TarInfo(dest.lstrip("/"))
            ti.type = tarfile.SYMTYPE
            ti.linkname = target
            ti.mode = 0o777
            tar.addfile(ti)
    return buf.getvalue()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("ref")
    p.add_argument("--entrypoint", default=None)
    p.add_argument("--cmd", default=None)
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--file", action="append", default=[])
    p.add_argument("--link", action="append", default=[])
    p.add_argument("--dir", action="append", default=[])
    args = p.parse_args()

    data = layer(args)
    diff = hashlib.sha256(data).hexdigest()
    cfg = {
        "architecture": "amd64",
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": {"Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"] + args.env},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "tests/e2e/cri/mkoci.py"}],
    }
    if args.entrypoint:
        cfg["config"]["Entrypoint"] = json.loads(args.entrypoint)
    if args.cmd:
        cfg["config"]["Cmd"] = json.loads(args.cmd)
    cfg_bytes = json.dumps(cfg, sort_keys=True, separators=(",", ":")).encode()
    cfg_name = hashlib.sha256(cfg_bytes).hexdigest() + ".json"
    manifest = [{"Config": cfg_name, "RepoTags": [args.ref], "Layers": [diff + "/layer.tar"]}]
    man_bytes = json.dumps(manifest).encode()

    tmp = args.out + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as out:
        for name, blob in ((diff + "/layer.tar", data), (cfg_name, cfg_bytes), ("manifest.json", man_bytes)):
            ti = tarfile.TarInfo(name)
            ti.size = len(blob)
            ti.mode = 0o644
            out.addfile(ti, io.BytesIO(blob))
    os.replace(tmp, args.out)
    print("mkoci: %s %s (%d KiB layer)" % (args.out, args.ref, len(data) // 1024), file=sys.stderr)


if __name__ == "__main__":
    main()
