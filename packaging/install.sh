#!/bin/sh
# Install the fxstudio bundle into your home: the app in ~/.local/opt/fxstudio, the command
# in ~/.local/bin, the menu entry, icon and AppStream metadata in ~/.local/share.
# Run it from the unpacked bundle:   tar -xf fxstudio-*.tar.zst && ./fxstudio-*/install.sh
# Remove it with:                    ./install.sh --uninstall
set -eu
ID=io.github.fxstudio.fxstudio
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-$HOME/.local}
APP=$PREFIX/opt/fxstudio
SHARE=$PREFIX/share

if [ "${1:-}" = "--uninstall" ]; then
    rm -rf "$APP" "$PREFIX/bin/fxstudio" "$SHARE/applications/$ID.desktop" \
        "$SHARE/icons/hicolor/scalable/apps/$ID.svg" "$SHARE/metainfo/$ID.metainfo.xml"
    echo "fxstudio removed from $PREFIX"
    exit 0
fi

[ -x "$HERE/fxstudio/fxstudio" ] || { echo "install.sh: run it from the unpacked bundle" >&2; exit 2; }
mkdir -p "$PREFIX/opt" "$PREFIX/bin" "$SHARE/applications" \
    "$SHARE/icons/hicolor/scalable/apps" "$SHARE/metainfo"
rm -rf "$APP.new"
cp -a "$HERE/fxstudio" "$APP.new"
rm -rf "$APP"
mv "$APP.new" "$APP"
ln -sf "$APP/fxstudio" "$PREFIX/bin/fxstudio"
sed "s#^Exec=fxstudio#Exec=$APP/fxstudio#" "$HERE/$ID.desktop" > "$SHARE/applications/$ID.desktop"
cp "$HERE/$ID.svg" "$SHARE/icons/hicolor/scalable/apps/$ID.svg"
cp "$HERE/$ID.metainfo.xml" "$SHARE/metainfo/$ID.metainfo.xml"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$SHARE/applications" || true
echo "fxstudio installed in $APP; run: fxstudio (make sure $PREFIX/bin is on your PATH)"
