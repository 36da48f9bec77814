#!/usr/bin/env bash
# Render docs/parity/before-0006.svg to a PNG, to look at it as a picture (the PNG is not committed).
# Installs cairosvg (PyPI; it needs the system's libcairo) when it is missing.
#   bash scripts/render-parity-png.sh [SVG] [PNG]     default: reports/parity/before-0006.png
set -euo pipefail
cd "$(dirname "$0")/.."
svg=${1:-docs/parity/before-0006.svg}
png=${2:-reports/parity/$(basename "${svg%.svg}").png}
if ! python3 -c "import cairosvg" 2>/dev/null; then
  echo "installing cairosvg (SVG -> PNG renderer, a few seconds)..." >&2
  python3 -m pip install --disable-pip-version-check -q cairosvg
fi
mkdir -p "$(dirname "$png")"
python3 -c "import sys, cairosvg; cairosvg.svg2png(url=sys.argv[1], write_to=sys.argv[2])" "$svg" "$png"
echo "wrote $png"
