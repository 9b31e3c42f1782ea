"""Cut the Chinese font the plots use: Noto Sans SC Regular, subset to the characters of the
course's Chinese text, into data/fonts/ with its license (SIL OFL 1.1).

The source is the npm package @expo-google-fonts/noto-sans-sc (static TTFs of Google Fonts'
Noto Sans SC, OFL); fetch it once, then cut (re-run after the Chinese catalogs change; the
tests say when a plot string's character is missing):

    npm pack @expo-google-fonts/noto-sans-sc@0.4.3 --pack-destination build/fonts
    .venv/bin/python scripts/make_font.py

The characters come from every translation in the package catalog (plot labels, verdicts,
hints), in the notebooks' catalogs (locale/zh_CN/LC_MESSAGES/*.po) and in the site's
(site/locale/zh_CN/LC_MESSAGES/site.po: the site serves this font to its Chinese pages), in the
Chinese data sets (data/zh/*.json: the incident titles chapter 1's diagram draws), plus
printable ASCII and CJK punctuation. Hinting is dropped: the plots are drawn at 100 dpi by Agg,
which hints itself, and the file is half the size without.
"""

from __future__ import annotations

import argparse
import io
import tarfile
from collections.abc import Iterable
from pathlib import Path

from babel.messages.pofile import read_po
from fontTools import subset
from fontTools.ttLib import TTFont

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "build" / "fonts" / "expo-google-fonts-noto-sans-sc-0.4.3.tgz"
MEMBER = "package/400Regular/NotoSansSC_400Regular.ttf"
LICENSE = "package/LICENSE_FONT"
OUT = ROOT / "data" / "fonts"
FONT = "NotoSansSC-keel-subset.ttf"
CATALOGS = [ROOT / "keel_lab" / "locale" / "zh_CN" / "LC_MESSAGES" / "keel_lab.po",
            *sorted((ROOT / "locale" / "zh_CN" / "LC_MESSAGES").glob("*.po")),
            ROOT / "site" / "locale" / "zh_CN" / "LC_MESSAGES" / "site.po"]  # the web font too
# printable ASCII, CJK symbols and punctuation, fullwidth forms, quotes, dashes and ellipsis
EXTRA = "".join(map(chr, [*range(0x20, 0x7F), *range(0x3000, 0x3020), *range(0xFF01, 0xFF5F),
                          *range(0x2013, 0x2027), 0xB7]))


def translations(paths: Iterable[Path]) -> str:
    """Every translated text of the catalogs, as one string."""
    texts = []
    for path in paths:
        with path.open("rb") as f:
            for message in read_po(f):
                strings = message.string if isinstance(message.string, tuple) else (
                    message.string,)
                texts += [s for s in strings if s and message.id]
    return "\n".join(texts)


def data_text() -> str:
    """The Chinese data sets' text (incident titles, service owners): the plots draw it too."""
    paths = sorted((ROOT / "data" / "zh").glob("*.json"))
    return "\n".join(p.read_text(encoding="utf-8") for p in paths)


def characters(text: str) -> list[str]:
    """The distinct characters the font must draw (no control characters), sorted."""
    return sorted({c for c in text + EXTRA if c.isprintable()})


def cut(source: bytes, chars: list[str]) -> bytes:
    """The source font subset to `chars`, without hinting."""
    options = subset.Options()
    options.hinting = False
    options.name_IDs = ["*"]  # keep the copyright, license and family names
    options.notdef_outline = True
    font = TTFont(io.BytesIO(source), recalcTimestamp=False)  # the same cut, the same bytes
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in chars])
    subsetter.subset(font)
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, default=PACKAGE, help="the npm package (.tgz)")
    args = parser.parse_args()
    if not args.package.exists():
        raise SystemExit(f"{args.package}: not found - run: npm pack "
                         "@expo-google-fonts/noto-sans-sc@0.4.3 --pack-destination build/fonts")
    with tarfile.open(args.package) as tar:
        source = tar.extractfile(MEMBER).read()  # type: ignore[union-attr]
        license_text = tar.extractfile(LICENSE).read()  # type: ignore[union-attr]
    chars = characters(translations(p for p in CATALOGS if p.exists()) + data_text())
    OUT.mkdir(parents=True, exist_ok=True)
    font = cut(source, chars)
    (OUT / FONT).write_bytes(font)
    (OUT / "OFL.txt").write_bytes(license_text)
    print(f"{OUT / FONT}: {len(chars)} characters, {len(font) / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
