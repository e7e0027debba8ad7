"""Produced bytes made deterministic: PNG and PDF stamps do not change a fingerprint."""

from __future__ import annotations

import io
import struct
import zlib
from datetime import UTC, datetime, timedelta, timezone

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jupyter_analyst.artifacts import ArtifactStore  # noqa: E402
from jupyter_analyst.artifacts.deterministic import normalise_bytes, png_chunks  # noqa: E402
from jupyter_analyst.artifacts.fingerprints import sha256_bytes  # noqa: E402


def figure(fmt: str, **savefig) -> bytes:
    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
    ax.bar(["a", "b", "c"], [3, 1, 2])
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, **savefig)
    plt.close(fig)
    return buf.getvalue()


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def after_ihdr(png: bytes, *chunks: bytes) -> bytes:
    return png[:33] + b"".join(chunks) + png[33:]


@pytest.fixture(scope="module")
def stamped_pngs() -> tuple[bytes, bytes]:
    one = after_ihdr(figure("png", metadata={"Software": "renderer 1.0"}),
                     chunk(b"tIME", struct.pack(">HBBBBB", 2024, 1, 1, 0, 0, 0)))
    two = after_ihdr(figure("png", metadata={"Software": "renderer 2.0", "Comment": "x"}),
                     chunk(b"tIME", struct.pack(">HBBBBB", 2026, 11, 22, 18, 0, 1)),
                     chunk(b"zTXt", b"Creation Time\x00\x00" + zlib.compress(b"today")),
                     chunk(b"iTXt", b"Author\x00\x00\x00\x00\x00someone"))
    return one, two


def test_png_stamps_do_not_change_the_fingerprint(stamped_pngs):
    one, two = stamped_pngs
    assert one != two
    clean = normalise_bytes(one, "image/png")
    assert clean == normalise_bytes(two, "image/png")
    kinds = [kind for kind, _ in png_chunks(clean)]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    assert not {b"tIME", b"tEXt", b"zTXt", b"iTXt"} & set(kinds)


def test_normalised_png_is_valid_and_pixel_identical(stamped_pngs):
    one, _ = stamped_pngs
    clean = normalise_bytes(one, "image/png")
    pos = 8
    while pos < len(clean):  # every chunk's CRC checks out
        (length,) = struct.unpack(">I", clean[pos:pos + 4])
        body = clean[pos + 4:pos + 8 + length]
        assert struct.unpack(">I", clean[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(body) & 0xFFFFFFFF
        pos += 12 + length
    assert pos == len(clean)
    assert np.array_equal(mpimg.imread(io.BytesIO(clean)), mpimg.imread(io.BytesIO(one)))


def test_png_without_stamps_or_malformed_is_left_alone():
    plain = normalise_bytes(figure("png"), "image/png")
    assert normalise_bytes(plain, "image/png") is plain
    for junk in (b"GIF89a...", b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00", b""):
        assert normalise_bytes(junk, "image/png") == junk


def test_same_chart_is_stored_once(tmp_path, stamped_pngs):
    one, two = stamped_pngs
    store = ArtifactStore(tmp_path / "ws.sqlite3", tmp_path)
    try:
        kw = dict(thread_id="t", type="image", mime="image/png", producer="python")
        a, _ = store.add_bytes(one, name="call_1-figure-1.png", **kw)
        path = tmp_path / "outputs" / "revenue.png"
        path.parent.mkdir()
        path.write_bytes(two)
        b, created = store.add_file(path, name="outputs/revenue.png", **kw)
        assert not created and b.artifact_id == a.artifact_id
        assert a.fingerprint == sha256_bytes(normalise_bytes(two, "image/png"))
        assert store.read_bytes(a.artifact_id) == normalise_bytes(one, "image/png")
    finally:
        store.close()


@pytest.mark.parametrize(
    "first, second",
    [
        (datetime(2024, 1, 1, tzinfo=UTC), datetime(2026, 11, 22, 18, 5, 7, tzinfo=UTC)),
        (datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=2))),
         datetime(2025, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=-5)))),
    ],
)
def test_pdf_saved_at_different_times_has_one_fingerprint(first, second):
    a = figure("pdf", metadata={"CreationDate": first, "ModDate": first})
    b = figure("pdf", metadata={"CreationDate": second, "ModDate": second})
    assert a != b and b"/CreationDate" in a and b"/ModDate" in a
    clean_a, clean_b = normalise_bytes(a, "application/pdf"), normalise_bytes(b, "application/pdf")
    assert sha256_bytes(clean_a) == sha256_bytes(clean_b)
    assert len(clean_a) == len(a)  # byte offsets in the xref table stay valid
    assert clean_a.startswith(b"%PDF-") and clean_a.rstrip().endswith(b"%%EOF")


def test_pdf_id_and_other_types():
    pdf = b"%PDF-1.4\n/ID [ <0123ABCD> <89ef> ]\n/ModDate (D:20240101)\n%%EOF"
    other = pdf.replace(b"0123ABCD", b"FFFF0000").replace(b"89ef", b"1234").replace(b"2024", b"2031")
    assert normalise_bytes(pdf, "application/pdf") == normalise_bytes(other, "application/pdf")
    assert normalise_bytes(pdf, "application/pdf; charset=binary") == normalise_bytes(pdf, "application/pdf")
    assert b"/Title (2024)" in normalise_bytes(b"/Title (2024)", "application/pdf")  # only dates are blanked
    for mime in ("text/plain", "application/vnd.apache.parquet", "image/svg+xml"):
        assert normalise_bytes(pdf, mime) is pdf
