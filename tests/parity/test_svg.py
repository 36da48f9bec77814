"""The parity SVG as a picture: full headers, a legend, disagreements outlined, long messages
shortened with the full text in a footnote and a tooltip; rendered to PNG when cairosvg is there."""
from __future__ import annotations

import importlib.util
import xml.etree.ElementTree as ET

import pytest

from harness import parity
from harness.parity.render import CELL_CHARS, COLUMNS, DISAGREE, QUALIFY

NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def svg(rows_before):
    rows, stats = rows_before
    return parity.render_svg(rows, stats, "harness parity --profile before-0006 --format svg")


def _texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{NS}text")]


def test_headers_are_whole(svg):
    words = " ".join(_texts(svg))
    for head in COLUMNS:
        for word in head.split():
            assert word in words, head
    assert "Doc sche" not in [t.strip() for t in _texts(svg)]


def test_legend_and_disagreements_are_marked(svg):
    texts = _texts(svg)
    assert any(t.startswith("the doc's cell and behavior disagree") for t in texts)
    assert any(t == "works / yes" for t in texts) and any(t == "does not / no" for t in texts)
    rects = list(ET.fromstring(svg).iter(f"{NS}rect"))
    outlined = [r for r in rects if r.get("stroke") in (DISAGREE, QUALIFY) and r.get("fill") == "none"]
    # before-0006 subset: cluster (schedulable) and mode (written) disagree with the doc, each outlined
    # on the behavior cell and the doc's own cell
    assert sum(r.get("stroke") == DISAGREE for r in outlined) >= 4


def test_long_cells_are_shortened_with_footnotes(svg):
    root = ET.fromstring(svg)
    cells = [t for t in root.iter(f"{NS}text") if t.find(f"{NS}title") is not None]
    assert cells, "no shortened cell"
    for t in cells:
        shown = "".join(t.itertext()).replace(t.find(f"{NS}title").text, "", 1)
        assert len(shown) <= CELL_CHARS + 6 and "… [" in shown
    assert "Shortened cells, in full:" in _texts(svg)


@pytest.mark.skipif(importlib.util.find_spec("cairosvg") is None,
                    reason="cairosvg not installed (scripts/render-parity-png.sh installs it)")
def test_renders_to_png(svg, tmp_path):
    import cairosvg
    out = tmp_path / "parity.png"
    cairosvg.svg2png(bytestring=svg.encode(), write_to=str(out))
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(data[16:20], "big")
    assert width > 1500                    # every column at full width
