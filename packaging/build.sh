#!/bin/sh
# Build the Linux bundle (make package): a PyInstaller one-folder app with the CPU torch,
# the install script, the .desktop entry, icon and AppStream metadata, as a .tar.zst.
# Usage: packaging/build.sh PYTHON   (the virtual environment's python, with the package extra)
set -eu
PY=$1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ID=io.github.fxstudio.fxstudio
VERSION=$("$PY" -c "import fxstudio; print(fxstudio.__version__)")
NAME=fxstudio-$VERSION-linux-$(uname -m)
OUT=$ROOT/build/bundle/$NAME
LEVEL=${ZSTD_LEVEL:-19}

if "$PY" -c "import sys, torch; sys.exit(0 if torch.version.cuda is None else 1)"; then :; else
    echo "build.sh: the venv has a CUDA torch; the bundle ships the CPU build (several GB less)." >&2
    echo "          make package builds it in a venv of its own (PACKAGE_VENV, PACKAGE_TORCH)." >&2
    exit 2
fi
desktop-file-validate "$ROOT/packaging/$ID.desktop"
appstreamcli validate --no-net --pedantic "$ROOT/packaging/$ID.metainfo.xml" >/dev/null

rm -rf "$OUT" "$ROOT/build/pyi"
"$PY" -m PyInstaller --noconfirm --log-level WARN --distpath "$OUT" --workpath "$ROOT/build/pyi" \
    "$ROOT/packaging/fxstudio.spec"
cp "$ROOT/packaging/install.sh" "$ROOT/packaging/$ID.desktop" "$ROOT/packaging/$ID.metainfo.xml" "$OUT/"
cp "$ROOT/resources/icons/fxstudio.svg" "$OUT/$ID.svg"
mkdir -p "$ROOT/dist"
tar -C "$ROOT/build/bundle" -cf - "$NAME" | zstd -q -T0 -"$LEVEL" -f -o "$ROOT/dist/$NAME.tar.zst"
echo "bundle: $OUT ($(du -sm "$OUT" | cut -f1) MB)"
echo "tarball: $ROOT/dist/$NAME.tar.zst ($(du -m "$ROOT/dist/$NAME.tar.zst" | cut -f1) MB)"
