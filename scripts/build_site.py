"""Build the course as a static JupyterLite site: every lesson runs in a browser tab.

    python scripts/build_site.py OUTDIR            # the lessons, the harness, the panel
    python scripts/build_site.py OUTDIR --floor    # the same build: an empty notebook, no harness
    python -m http.server -d OUTDIR                # any static host serves it

Everything comes from PyPI and npm, every version pinned, and nothing from a CDN when
the site runs:

    build tools   requirements-site.txt (the whole tree, hash-checked), in a venv of
                  their own (CACHE/venv)
    Pyodide       npm's pyodide@314.0.6: the core only (wasm, the standard library)
    wheels        requirements-browser.txt (hash-checked), the kernel's own wheels
                  (from jupyterlite-pyodide-kernel), and the harness, built as a wheel
    the lock      static/pyodide/pyodide-lock.json lists only those wheels, and the
                  kernel preloads the harness and ipywidgets: no lesson needs an install
    content       lessons/NN_*.ipynb, their modules (course.py, ...), exercises/ (not the
                  solutions)

CACHE (``--cache``, default build/site-cache) keeps the venv and the downloads; a second
build reuses them and takes about 20 s.
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYODIDE, PYODIDE_SHA256 = "314.0.6", \
    "d78ac549b28a2a58600cd06f44e017024151775f8c6b2d73fab1475400d38ea2"
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
PLATFORM = ["--platform", "pyemscripten_2026_0_wasm32", "--platform", "any",
            "--python-version", "3.14", "--implementation", "cp", "--abi", "cp314", "--abi", "none"]
# Environment markers as Pyodide 314 reads them, to list each wheel's dependencies.
BROWSER_MARKERS = {"sys_platform": "emscripten", "platform_system": "Emscripten",
                   "os_name": "posix", "platform_machine": "wasm32",
                   "implementation_name": "cpython", "platform_python_implementation": "CPython",
                   "python_version": "3.14", "python_full_version": "3.14.2", "extra": ""}
# Required by a wheel's metadata, left out on purpose (the lock's dependencies skip them).
NOT_SHIPPED = {"jupyterlab-widgets": "the widgets' lab extension: the site serves it as "
                                     "an extension; the kernel never imports it"}
# What the kernel loads at start, with their dependencies: its own packages (else it
# installs them one by one), the plan panel, and the harness.
KERNEL = ["micropip", "piplite", "pyodide-kernel", "ipykernel", "comm", "ipython", "jedi",
          "widgetsnbextension"]
COURSE = ["ipywidgets", "agent-harness-course"]
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"


def run(*argv: object, **kwargs) -> None:
    subprocess.run([str(a) for a in argv], check=True, **kwargs)


def build_tools(cache: Path) -> Path:
    """The venv with requirements-site.txt installed; made again when that file changes."""
    venv, wanted = cache / "venv", (ROOT / "requirements-site.txt").read_text()
    stamp = venv / "requirements-site.txt"
    if not (stamp.exists() and stamp.read_text() == wanted):
        shutil.rmtree(venv, ignore_errors=True)
        run(sys.executable, "-m", "venv", venv)
        python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
        run(python, "-m", "pip", "install", "-q", "--require-hashes",
            "-r", ROOT / "requirements-site.txt")
        stamp.write_text(wanted)
    return venv / ("Scripts" if os.name == "nt" else "bin")


def browser_wheels(cache: Path, python: Path) -> list[Path]:
    """The wheels of requirements-browser.txt, for Pyodide 314, checked against their hashes."""
    folder = cache / "wheels"
    run(python, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes",
        "--only-binary=:all:", *PLATFORM, "-d", folder, "-r", ROOT / "requirements-browser.txt")
    pins = re.findall(r"^([\w.-]+)==([\w.]+)", (ROOT / "requirements-browser.txt").read_text(),
                      re.MULTILINE)
    wheels = []
    for name, version in pins:
        found = [w for w in folder.glob("*.whl")
                 if _canonical(w.name.split("-")[0]) == _canonical(name)
                 and w.name.split("-")[1] == version]
        if len(found) != 1:
            sys.exit(f"build_site: expected one wheel of {name}=={version} in {folder}")
        wheels += found
    return wheels


def harness_wheel(cache: Path, python: Path) -> Path:
    """The harness as a wheel, built from a copy of the package (nothing written here)."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "src"
        source.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, source)
        shutil.copytree(ROOT / "harness", source / "harness",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        out = cache / "harness-wheel"
        shutil.rmtree(out, ignore_errors=True)
        run(python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
            "-w", out, source)
    return next(out.glob("*.whl"))


def pyodide_core(cache: Path) -> Path:
    """npm's pyodide package, unpacked: the folder that holds pyodide.mjs."""
    tarball = cache / f"pyodide-{PYODIDE}.tgz"
    if not tarball.exists():
        run("npm", "pack", f"pyodide@{PYODIDE}", "--silent", "--pack-destination", cache)
    if _sha256(tarball) != PYODIDE_SHA256:
        tarball.unlink()
        sys.exit(f"build_site: {tarball.name} does not have the pinned sha256; run again")
    unpacked = cache / f"pyodide-{PYODIDE}"
    if not (unpacked / "package" / "pyodide.mjs").exists():
        with tarfile.open(tarball) as archive:
            archive.extractall(unpacked, filter="data")
    return unpacked / "package"


def kernel_wheels() -> list[Path]:
    """The wheels jupyterlite-pyodide-kernel carries: its kernel, piplite, the shims."""
    folder = (Path(sys.prefix) / "share/jupyter/labextensions/@jupyterlite"
              / "pyodide-kernel-extension/static/pypi")
    wheels = sorted(folder.glob("*.whl"))
    # widgetsnbextension comes twice (3.6.999, 4.0.999): ipywidgets 8 wants the 4.
    return [w for w in wheels if not w.name.startswith("widgetsnbextension-3.")]


def write_lock(core: Path, wheels: list[Path], lock: Path) -> None:
    """A pyodide-lock.json that lists only ``wheels`` (all next to it) and their dependencies."""
    from packaging.requirements import Requirement

    entries, requires = {}, {}
    for wheel in wheels:
        meta = _metadata(wheel)
        name = _canonical(meta["Name"])
        requires[name] = [Requirement(r) for r in meta.get_all("Requires-Dist") or ()]
        entries[name] = {"name": meta["Name"], "version": meta["Version"],
                         "file_name": wheel.name, "install_dir": "site",
                         "sha256": _sha256(wheel), "package_type": "package",
                         "imports": _imports(wheel), "depends": [],
                         "unvendored_tests": False, "shared_library": False}
    for name, reqs in requires.items():
        for req in reqs:
            if req.marker is not None and not req.marker.evaluate(BROWSER_MARKERS):
                continue
            dep = _canonical(req.name)
            if dep in entries:
                entries[name]["depends"].append(dep)
            elif dep not in NOT_SHIPPED:
                sys.exit(f"build_site: {name} needs {req}, which requirements-browser.txt "
                         "does not list")
    info = json.loads((core / "pyodide-lock.json").read_text())["info"]
    lock.write_text(json.dumps({"info": info, "packages": dict(sorted(entries.items()))},
                               indent=1))


def content(folder: Path, floor: bool) -> None:
    """The notebooks the site opens with: the lessons and what they import, or one
    empty notebook (the floor)."""
    folder.mkdir(parents=True)
    if floor:
        empty = {"cells": [], "metadata": {"kernelspec": {"name": "python", "display_name":
                 "Python (Pyodide)", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}
        (folder / "floor.ipynb").write_text(json.dumps(empty))
        return
    lessons = ROOT / "lessons"
    local = {}
    for notebook in sorted(lessons.glob("[0-9][0-9]_*.ipynb")):
        shutil.copy(notebook, folder)
        local.update(local_outputs(notebook))
    (folder / "local_outputs.json").write_text(json.dumps(local, indent=1, ensure_ascii=False))
    for module in sorted(lessons.glob("*.py")):  # course.py, and what lessons import beside it
        shutil.copy(module, folder)
    shutil.copytree(lessons / "exercises", folder / "exercises",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def local_outputs(notebook: Path) -> dict[str, str]:
    """What each cell about processes prints on a local install (its committed stdout),
    by the hash of its source: ``course.local_install_prints()`` shows it in the browser."""
    found = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and "local_install_prints()" in source:
            found[_cell_key(source)] = "".join(
                "".join(o["text"]) for o in cell["outputs"] if o.get("name") == "stdout"
            ).rstrip("\n")
    return found


def lite_config(packages: list[str]) -> dict:
    return {"jupyter-lite-schema-version": 0, "jupyter-config-data": {
        "appName": "Agent harness course",
        "exposeAppInBrowser": True,  # window.jupyterapp: what the browser checks read
        "litePluginSettings": {KERNEL_PLUGIN: {
            "disablePyPIFallback": True,
            "loadPyodideOptions": {"packages": packages}}}}}


def build(out: Path, cache: Path, floor: bool) -> None:
    started = time.perf_counter()
    bin_dir = Path(sys.executable).parent
    python = bin_dir / "python"
    core = pyodide_core(cache)
    wheels = browser_wheels(cache, python) + kernel_wheels()
    if not floor:
        wheels.append(harness_wheel(cache, python))
    with tempfile.TemporaryDirectory() as tmp:
        lite = Path(tmp) / "lite"
        static = lite / "static" / "pyodide"
        static.mkdir(parents=True)
        for name in PYODIDE_FILES:
            shutil.copy(core / name, static)
        for wheel in wheels:
            shutil.copy(wheel, static)
        write_lock(core, wheels, static / "pyodide-lock.json")
        content(lite / "content", floor)
        packages = KERNEL + ([] if floor else COURSE)
        (lite / "jupyter-lite.json").write_text(json.dumps(lite_config(packages), indent=1))
        shutil.rmtree(out, ignore_errors=True)
        env = {**os.environ, "JUPYTER_DATA_DIR": str(Path(tmp) / "data"),
               "JUPYTER_CONFIG_DIR": str(Path(tmp) / "config")}
        env.pop("JUPYTERLITE_PYODIDE_URL", None)
        done = subprocess.run([str(bin_dir / "jupyter"), "lite", "build", "--lite-dir", str(lite),
                               "--contents", str(lite / "content"), "--output-dir",
                               str(out.resolve()), "--no-sourcemaps"],
                              cwd=lite, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"build_site: jupyter lite build failed:\n{done.stdout}{done.stderr}")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"site: {out} ({size / 1e6:.1f} MB) in {time.perf_counter() - started:.0f} s"
          + (" [floor: no harness]" if floor else ""))


def _cell_key(source: str) -> str:
    """The key course.cell_key gives a cell (the build venv cannot import course.py)."""
    return hashlib.sha256(source.strip().encode("utf-8")).hexdigest()[:16]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(archive.read(name).decode())


def _imports(wheel: Path) -> list[str]:
    """The top-level modules a wheel installs (what ``import`` names)."""
    with zipfile.ZipFile(wheel) as archive:
        tops = {n.split("/")[0] for n in archive.namelist()}
    return sorted(t.removesuffix(".py") for t in tops if not t.endswith((".dist-info", ".data"))
                  and (t.endswith(".py") or "." not in t))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path, help="the folder to build the site in (replaced)")
    parser.add_argument("--floor", action="store_true",
                        help="the same build with an empty notebook and no harness")
    parser.add_argument("--cache", type=Path, default=ROOT / "build" / "site-cache",
                        help="where the build venv and the downloads are kept")
    args = parser.parse_args(argv)
    cache = args.cache.resolve()
    cache.mkdir(parents=True, exist_ok=True)
    bin_dir = build_tools(cache)
    if Path(sys.prefix).resolve() != bin_dir.parent.resolve():  # go on in the build venv
        return subprocess.call([str(bin_dir / "python"), __file__, *argv])
    build(args.outdir, cache, args.floor)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
