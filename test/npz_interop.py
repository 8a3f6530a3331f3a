#!/usr/bin/python3
"""Interop test for `decomposed unpack --to npz` against NumPy.

For every element type unpack supports (the cases of unpack_interop.py:
scalar, zero-size and 1-D..4-D shapes, default, column-major and random
layouts, several wire encodings), in decomposed and classic mode, it runs
`decomposed unpack --dump-snapshot-outputs` twice, once to .npy files and
once `--to npz OUT.npz --manifest`, and checks that:
  * the archive is a zip of stored entries whose CRCs hold (zipfile.testzip),
    named model.hlo, value_input<i>.npy, snapshot_output<j>.npy (and
    <entry>.meta for ml_dtypes types, manifest.json);
  * numpy.load(OUT.npz) opens it lazily (an NpzFile) and each array equals
    the .npy file of the same name: dtype, shape and bytes;
  * every entry's bytes are those of the file of the same name;
  * manifest.json lists every entry with the archive offset of its bytes;
  * a failing run leaves no OUT.npz and no temp file.

usage: npz_interop.py <decomposed CLI> <scratch dir>
"""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unpack_interop as ui  # noqa: E402  (the case builders)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(cli, args):
    return subprocess.run([cli] + args, capture_output=True, text=True)


def main():
    cli, scratch = sys.argv[1], sys.argv[2]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    arrays = 0
    for name in ui.TYPES:
        cases = ui.cases_for(name)
        bodies = [ui.literal(name, c[0], c[1], c[2]) for c in cases]
        dec = os.path.join(scratch, "%s.dhs" % name)
        with open(dec, "wb") as f:
            f.write(ui.decomposed_file(bodies, bodies[::-1], True))
        snap = os.path.join(scratch, "%s.pb" % name)
        with open(snap, "wb") as f:
            f.write(ui.hlo_snapshot(bodies, ui.tuple_literal(
                bodies[::-1], [b"" for _ in bodies])))
        for mode, path in (("decomposed", dec), ("snapshot", snap)):
            what = "%s %s" % (name, mode)
            files = ui.fresh(os.path.join(scratch, "files"))
            common = ["unpack", "--snapshot-type=" + mode,
                      "--dump-snapshot-outputs", "--ml-dtype-sidecar"]
            r = run(cli, common + ["--output-prefix=" + files, path])
            check(r.returncode == 0, "%s files: %s" % (what, r.stderr))
            npz = os.path.join(scratch, "out.npz")
            if os.path.exists(npz):
                os.remove(npz)
            r = run(cli, common + ["--to", "npz", npz, "--manifest", path])
            check(r.returncode == 0, "%s npz: %s" % (what, r.stderr))
            if r.returncode != 0:
                continue
            with zipfile.ZipFile(npz) as z:
                check(z.testzip() is None, what + ": a CRC does not match")
                infos = z.infolist()
                check(all(i.compress_type == zipfile.ZIP_STORED for i in infos),
                      what + ": an entry is compressed")
                names = [i.filename for i in infos]
                on_disk = sorted(os.listdir(files))
                check(sorted(names) == sorted(on_disk + ["manifest.json"]),
                      "%s: entries %s, files %s" % (what, names, on_disk))
                for n in on_disk:
                    with open(files + n, "rb") as f:
                        check(z.read(n) == f.read(), "%s: %s bytes" % (what, n))
                manifest = json.loads(z.read("manifest.json"))
            with open(npz, "rb") as f:
                blob = f.read()
            listed = sorted(e["name"] for e in manifest["files"])
            check(listed == sorted(os.listdir(files)),
                  "%s: manifest lists %s" % (what, listed))
            for e in manifest["files"]:
                with open(files + e["name"], "rb") as f:
                    data = f.read()
                off = e["archive_offset"]
                check(blob[off:off + e["bytes"]] == data,
                      "%s: manifest offset of %s" % (what, e["name"]))
            loaded = np.load(npz)  # lazy: an NpzFile
            check(isinstance(loaded, np.lib.npyio.NpzFile), what + ": not lazy")
            for n in sorted(os.listdir(files)):
                if not n.endswith(".npy"):
                    continue
                want = np.load(files + n)
                got = loaded[n[:-4]]
                check(got.dtype == want.dtype and got.shape == want.shape
                      and got.tobytes() == want.tobytes(),
                      "%s: %s differs from the .npy file" % (what, n))
                if want.dtype.kind not in "Vc" and want.dtype.kind != "f":
                    check(np.array_equal(got, want), "%s: %s values" % (what, n))
                arrays += 1
            loaded.close()

    # A failing run: no OUT.npz, no temp file.
    good = [ui.literal("F32", ui.make_array("F32", (4,)), [0], "canonical")
            for _ in range(4)]
    bad = ui.f_len(1, ui.shape_proto(11, [5], [0], True)) + ui.f_len(8, b"\0" * 16)
    p = os.path.join(scratch, "bad.dhs")
    with open(p, "wb") as f:
        f.write(ui.decomposed_file(good[:2] + [bad] + good[2:], [], True))
    d = ui.fresh(os.path.join(scratch, "bad_out"))
    r = run(cli, ["unpack", "--to", "npz", d + "out.npz", p])
    check(r.returncode == 1 and "input 2 body" in r.stderr,
          "bad input: exit %d: %s" % (r.returncode, r.stderr))
    check(os.listdir(d) == [], "bad input left %s" % os.listdir(d))

    print("checked %d arrays over %d types; %d failures"
          % (arrays, len(ui.TYPES), len(failures)))
    shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
