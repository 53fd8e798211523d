#!/usr/bin/env python3
"""Installs Slipstream as users get it, and takes it away again: the Debian package in a clean
root, and the user-local install.

    install_test.py deb --build-dir B --version V --expect-file usr/bin/slipstream ...
                        --program chain_dispatch [--expect-stat NAME>=N ...]
    install_test.py user --build-dir B

deb: builds the package from the build tree with CPack (into a temporary folder) and checks
  * its control fields (name, version, section, priority, maintainer, the Depends the loader,
    the command and the C/C++ runtimes need) and that it has no maintainer scripts;
  * that it holds exactly the --expect-file files;
  * in a clean root (dpkg --root: a dpkg database of its own, holding only the host's entries
    for the packages Depends names, so dpkg checks the dependencies without --force-depends):
    dpkg -i puts every file where the manifests say (library_path relative, resolving to the
    packaged library); the loader, searching only the root's share/ (XDG_DATA_DIRS), finds
    the layer and loads the root's library (VK_LOADER_DEBUG's layer chain): implicit with
    ENABLE_SLIPSTREAM=1, explicit by name, not at all with neither; the installed
    `slipstream info` and `slipstream run` work with no build tree in sight, and the run
    gives the program's checksum without the layer while the layer's statistics file shows
    it did its work (--expect-stat); the installed command's `install --user` and
    `uninstall --user` (as for `user` below);
  * dpkg -r leaves no file or folder of the package in the root, and dpkg --purge takes it
    out of the database.
user: `tools/slipstream install --user` from the build tree, with HOME (and XDG_DATA_HOME,
  once set outside HOME, once left to its default) in temporary folders: the loader finds the
  layer from there (implicit with ENABLE_SLIPSTREAM=1, explicit by name), a second install
  replaces the first, and `uninstall --user` leaves both folders as they were.

Every program runs with the loader kept to the root or the user's folders (XDG_* variables,
the drivers named by VK_DRIVER_FILES) and Mesa's shader cache off, so nothing on the host,
an installed Slipstream included, takes part. Exit status 0 when every check passed.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tests", "common"))
sys.path.insert(0, os.path.join(SOURCE, "tests", "apps"))
import loader_chain  # noqa: E402
import run_app  # noqa: E402
from checks import check, failures  # noqa: E402

PACKAGE = "vulkan-layer-slipstream"
LAYER = "VK_LAYER_slipstream"
MANIFEST = "VkLayer_slipstream.json"
# What the package must depend on: the loader, the command's interpreter, the C/C++ runtimes.
REQUIRED_DEPENDS = ("libvulkan1", "python3", "libc6", "libstdc++6")

def run(argv, env=None, cwd=None, timeout=120):
    p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def host_drivers():
    """The ICD manifests the loader would find on the host (VK_DRIVER_FILES then names them
    all, so the data folders searched for layers can be the test's alone)."""
    dirs = (os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":")
    found = []
    for d in [os.path.join(x, "vulkan", "icd.d") for x in dirs if x] + ["/etc/vulkan/icd.d"]:
        found += sorted(glob.glob(os.path.join(d, "*.json")))
    return ":".join(dict.fromkeys(found))


def clean_env(tmp, data_dirs, home=None, data_home=None):
    """An environment in which the loader sees only `data_dirs` (and `home`'s folders)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VK_", "XDG_", "SLIPSTREAM_"))
           and k not in ("ENABLE_SLIPSTREAM", "DISABLE_SLIPSTREAM", "MANGOHUD", "ENABLE_VKBASALT")}
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty, exist_ok=True)
    env["HOME"] = home or empty
    if data_home:
        env["XDG_DATA_HOME"] = data_home
    env["XDG_DATA_DIRS"] = data_dirs
    env["XDG_CONFIG_HOME"] = empty
    env["XDG_CONFIG_DIRS"] = empty
    env["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
    env["MESA_SHADER_CACHE_DISABLE"] = "true"
    env["VK_DRIVER_FILES"] = host_drivers()
    return env


def slipstream_chain(out, kind="device"):
    """The Slipstream entries of the loader's last `kind` chain in `out`."""
    chain = loader_chain.parse(out).get(kind, [])
    return [layer for layer in chain if layer.name == LAYER]


def check_loaded(name, info, env, library, manifest_dir=None, cwd=None):
    """Runs `info` (slipstream-info's command line) in `env` (loader debug on): the layer must be enabled (its own
    statistics probe), once in the chain, from `library` (and a manifest in `manifest_dir`)."""
    env = dict(env, VK_LOADER_DEBUG="layer")
    rc, out = run(info, env, cwd=cwd)
    ours = slipstream_chain(out)
    ok = (rc == 0 and "ENABLED in this environment" in out and len(ours) == 1
          and ours[0].library == os.path.realpath(library)
          and (manifest_dir is None or os.path.dirname(ours[0].manifest or "") == manifest_dir))
    return check(name, ok, f"exit {rc}, Slipstream in the chain: {ours}, expected {library}\n{out}")


def check_not_loaded(name, info, env, cwd=None):
    rc, out = run(info, dict(env, VK_LOADER_DEBUG="layer"), cwd=cwd)
    return check(name, rc == 0 and "not enabled in this environment" in out and not slipstream_chain(out),
                 f"exit {rc}\n{out}")


def snapshot(*roots):
    """Every path under roots (files, folders, links)."""
    seen = set()
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            seen.update(os.path.join(dirpath, n) for n in dirnames + filenames)
    return seen


def check_user_install(label, command, info, tmp, data_home_outside):
    """`command install --user` then `uninstall --user`, HOME in tmp; XDG_DATA_HOME in a
    folder of its own, or unset (~/.local/share)."""
    home = tempfile.mkdtemp(prefix="home-", dir=tmp)
    data_home = tempfile.mkdtemp(prefix="data-", dir=tmp) if data_home_outside else None
    share = data_home or os.path.join(home, ".local", "share")
    # The loader searches only the user's folders (and an empty system one).
    empty_share = tempfile.mkdtemp(prefix="share-", dir=tmp)
    env = clean_env(tmp, empty_share, home=home, data_home=data_home)
    label = f"{label} (XDG_DATA_HOME {'set' if data_home else 'unset'})"
    roots = [home] + ([data_home] if data_home else [])
    before = snapshot(*roots)
    library = os.path.join(home, ".local", "lib", "slipstream", "libVkLayer_slipstream.so")
    manifests = {k: os.path.join(share, "vulkan", f"{k}_layer.d", MANIFEST) for k in ("explicit", "implicit")}

    rc, out = run(command + ["install", "--user"], env, cwd=tmp)
    if not check(f"{label}: install --user", rc == 0, out):
        return
    if not data_home:
        rc, out = run(command + ["install", "--user"], env, cwd=tmp)
        check(f"{label}: a second install --user replaces the first", rc == 0, out)
    files = sorted(p for p in snapshot(*roots) - before if os.path.isfile(p))
    expected = sorted([library] + list(manifests.values()))
    check(f"{label}: exactly the library and both manifests installed", files == expected,
          f"installed {files}, expected {expected}")
    for kind, path in manifests.items():
        try:
            with open(path, encoding="utf-8") as f:
                manifest = json.load(f)
            ok = manifest["layer"]["name"] == LAYER and manifest["layer"]["library_path"] == library \
                and manifest["file_format_version"] == "1.2.0"
        except (OSError, ValueError, KeyError) as e:
            ok, manifest = False, e
        check(f"{label}: {kind} manifest names the installed library", ok, str(manifest)[:2000])

    check_loaded(f"{label}: implicit (ENABLE_SLIPSTREAM=1) from the user's folder", info,
                 dict(env, ENABLE_SLIPSTREAM="1"), library, os.path.dirname(manifests["implicit"]), cwd=tmp)
    check_loaded(f"{label}: explicit by name from the user's folder", info,
                 dict(env, VK_INSTANCE_LAYERS=LAYER), library, os.path.dirname(manifests["explicit"]), cwd=tmp)
    check_not_loaded(f"{label}: neither: not loaded", info, env, cwd=tmp)

    rc, out = run(command + ["uninstall", "--user"], env, cwd=tmp)
    check(f"{label}: uninstall --user", rc == 0 and out.count("removed ") == 3, out)
    after = snapshot(*roots)
    check(f"{label}: nothing left behind", after == before,
          f"left: {sorted(after - before)}; gone: {sorted(before - after)}")
    rc, out = run(command + ["uninstall", "--user"], env, cwd=tmp)
    check(f"{label}: uninstall again: nothing to remove", rc == 0 and "nothing to remove" in out, out)
    check_not_loaded(f"{label}: after uninstall: not loaded", info, dict(env, ENABLE_SLIPSTREAM="1"), cwd=tmp)


def control_fields(deb):
    rc, out = run(["dpkg-deb", "-f", deb])
    fields, key = {}, None
    for line in out.splitlines():
        if line.startswith(" ") and key:
            fields[key] += "\n" + line
        elif ":" in line:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def depends_names(depends):
    return [alt.split()[0] for item in depends.split(",") for alt in item.split("|")[:1] if alt.strip()]


def host_status_stanzas(names):
    """The host dpkg database's entries for those of `names` installed there: {name: stanza}."""
    with open("/var/lib/dpkg/status", encoding="utf-8") as f:
        stanzas = f.read().split("\n\n")
    picked = {}
    for s in stanzas:
        fields = dict(line.split(":", 1) for line in s.splitlines() if line and not line[0].isspace() and ":" in line)
        name = fields.get("Package", "").strip()
        if name in names and "install ok installed" in fields.get("Status", ""):
            picked[name] = s.strip("\n")
    return picked


def run_program(argv, env):
    rc, out = run(argv, env, timeout=120)
    sums = [m.group(1) for m in (run_app.CHECKSUM_RE.match(line.strip()) for line in out.splitlines()) if m]
    return rc, (sums[0] if len(sums) == 1 else None), out


def test_deb(args, tmp):
    start = time.monotonic()
    out_dir = os.path.join(tmp, "package")
    rc, out = run(["cpack", "--config", os.path.join(args.build_dir, "CPackConfig.cmake"), "-G", "DEB",
                   "-B", out_dir], cwd=tmp, timeout=300)
    debs = glob.glob(os.path.join(out_dir, "*.deb"))
    if not check("cpack -G DEB builds one package", rc == 0 and len(debs) == 1, out):
        return
    deb = debs[0]
    print(f"  {os.path.basename(deb)} built in {time.monotonic() - start:.1f} s")

    fields = control_fields(deb)
    check("control: Package, Version, Section, Priority, Maintainer",
          fields.get("Package") == PACKAGE and fields.get("Version") == args.version
          and fields.get("Section") == "libs" and fields.get("Priority") == "optional"
          and "<" in fields.get("Maintainer", "") and fields.get("Description"), str(fields))
    depends = depends_names(fields.get("Depends", ""))
    check(f"control: Depends names {', '.join(REQUIRED_DEPENDS)}", all(d in depends for d in REQUIRED_DEPENDS),
          fields.get("Depends", "(none)"))
    control = os.path.join(tmp, "control")
    rc, out = run(["dpkg-deb", "-e", deb, control])
    scripts = sorted(set(os.listdir(control) if rc == 0 else []) - {"control", "md5sums"})
    check("no maintainer scripts (control and md5sums only)", rc == 0 and not scripts, f"{out} {scripts}")
    rc, listing = run(["dpkg-deb", "-c", deb])
    files = sorted(line.split()[-1].lstrip(".").lstrip("/") for line in listing.splitlines()
                   if line and not line.startswith("d"))
    check("holds exactly the expected files", files == sorted(args.expect_file),
          f"package: {files}\nexpected: {sorted(args.expect_file)}")

    # The clean root: a dpkg database that knows only the packages Depends names, as the host
    # has them installed, so dpkg checks the dependencies for real.
    root = os.path.join(tmp, "root")
    admin = os.path.join(root, "var", "lib", "dpkg")
    for d in ("info", "updates", "triggers"):
        os.makedirs(os.path.join(admin, d))
    stanzas = host_status_stanzas(set(depends))
    with open(os.path.join(admin, "status"), "w", encoding="utf-8") as f:
        f.write("".join(s + "\n\n" for s in stanzas.values()))
    missing = set(depends) - set(stanzas)
    check("the host has every package Depends names", not missing, f"missing on the host: {sorted(missing)}")
    before = snapshot(root)
    rc, out = run(["dpkg", f"--root={root}", "-i", deb])
    if not check("dpkg --root -i (dependencies checked, no force)", rc == 0, out):
        return
    rc, out = run(["dpkg-query", f"--admindir={admin}", "-L", PACKAGE])
    listed = [p for p in out.splitlines() if p.startswith("/")]
    placed = sorted(os.path.relpath(p, "/") for p in listed if os.path.isfile(root + p))
    check("every file of the package is in the root", placed == sorted(args.expect_file),
          f"in the root: {placed}")

    share = os.path.join(root, "usr", "share")
    library = None
    for kind in ("explicit", "implicit"):
        path = os.path.join(share, "vulkan", f"{kind}_layer.d", MANIFEST)
        try:
            with open(path, encoding="utf-8") as f:
                layer = json.load(f)["layer"]
            lib_path = layer["library_path"]
            resolved = os.path.realpath(os.path.join(os.path.dirname(path), lib_path))
        except (OSError, ValueError, KeyError) as e:
            check(f"{kind} manifest in /usr/share/vulkan/{kind}_layer.d", False, str(e))
            continue
        ok = (not os.path.isabs(lib_path) and os.path.isfile(resolved)
              and resolved.startswith(os.path.realpath(root) + os.sep)
              and os.path.relpath(resolved, os.path.realpath(root)) in args.expect_file)
        check(f"{kind} manifest: library_path {lib_path} is relative and finds the packaged library", ok,
              f"resolves to {resolved}")
        library = resolved

    info = [os.path.join(root, "usr", "libexec", "slipstream", "slipstream-info")]
    command = [os.path.join(root, "usr", "bin", "slipstream")]
    env = clean_env(tmp, share)
    if library:
        manifests = os.path.join(share, "vulkan")
        check_loaded("loader: implicit (ENABLE_SLIPSTREAM=1) from the root", info, dict(env, ENABLE_SLIPSTREAM="1"),
                     library, os.path.join(manifests, "implicit_layer.d"), cwd=tmp)
        check_loaded("loader: explicit by name from the root", info, dict(env, VK_INSTANCE_LAYERS=LAYER),
                     library, os.path.join(manifests, "explicit_layer.d"), cwd=tmp)
        check_not_loaded("loader: neither: not loaded", info, env, cwd=tmp)

        # The installed command, away from the source and build trees (cwd: the temporary folder).
        check_loaded("installed `slipstream info`", command + ["info"], env, library, cwd=tmp)
        rc, base_sum, out = run_program(args.program, dict(env, DISABLE_SLIPSTREAM="1"))
        check("the program without the layer", rc == 0 and base_sum, out)
        stats = os.path.join(tmp, "stats.json")
        run_env = dict(env, VK_SLIPSTREAM_STATS_FILE=stats, VK_LOADER_DEBUG="layer")
        rc, layer_sum, out = run_program(command + ["run", "--"] + args.program, run_env)
        ours = slipstream_chain(out)
        problem = run_app.check_stats(stats, args.expect_stat)
        check("installed `slipstream run`: same checksum, the root's layer did its work",
              rc == 0 and layer_sum == base_sum and len(ours) == 1 and ours[0].library == library and not problem,
              f"exit {rc}, checksum {layer_sum} (without: {base_sum}), chain {ours}, stats: {problem or 'ok'}\n{out}")
        check_user_install("installed command", command, info, tmp, data_home_outside=True)

    rc, out = run(["dpkg", f"--root={root}", "-r", PACKAGE])
    check("dpkg --root -r", rc == 0, out)
    left = sorted(p for p in snapshot(root) - before if not p.startswith(admin + os.sep))
    check("after removal no file or folder of the package is left", not left, f"left: {left}")
    rc, out = run(["dpkg", f"--root={root}", "--purge", PACKAGE])
    check("dpkg --root --purge", rc == 0, out)
    rc, out = run(["dpkg-query", f"--admindir={admin}", "-W", "-f", "${Status}", PACKAGE])
    leftovers = glob.glob(os.path.join(admin, "info", PACKAGE + ".*"))
    check("after purge the package is gone from the database",
          (rc != 0 or "not-installed" in out) and not leftovers, f"{out} {leftovers}")


def test_user(args, tmp):
    command = [sys.executable, os.path.join(SOURCE, "tools", "slipstream"), "--build-dir", args.build_dir]
    info = [os.path.join(args.build_dir, "tools", "slipstream-info")]
    check_user_install("build tree", command, info, tmp, data_home_outside=True)
    check_user_install("build tree", command, info, tmp, data_home_outside=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=("deb", "user"))
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--version", help="deb: the project's version, the package's")
    ap.add_argument("--expect-file", action="append", default=[], help="deb: a file the package holds (repeatable)")
    ap.add_argument("--program", nargs="+", help="deb: a suite program (and its arguments) to run with the layer")
    ap.add_argument("--expect-stat", action="append", default=[], metavar="NAME>=N",
                    help="deb: a counter of the layer's statistics in that run (as run_app.py)")
    args = ap.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    if args.case == "deb":
        if not (args.version and args.expect_file and args.program):
            ap.error("deb needs --version, --expect-file and --program")
        try:
            args.expect_stat = [run_app.parse_stat_expectation(e) for e in args.expect_stat]
        except ValueError as e:
            ap.error(str(e))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="slipstream-install-") as tmp:
        (test_deb if args.case == "deb" else test_user)(args, tmp)
    print(f"{len(failures)} failed" if failures else f"all install checks passed ({time.monotonic() - start:.1f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
