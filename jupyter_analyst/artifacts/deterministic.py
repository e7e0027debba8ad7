"""Make produced bytes deterministic, so equal work gives equal fingerprints.

Renderers stamp files with the time and their version (PNG ``tIME``/``tEXt`` chunks, PDF
``/CreationDate`` and ``/ID``); those bytes are removed or blanked before hashing and
storing.
"""

from __future__ import annotations

from pathlib import Path

import re
import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Ancillary PNG chunks that carry times, software names or free text.
_PNG_DROP = {b"tIME", b"tEXt", b"zTXt", b"iTXt"}
_PDF_DATES = re.compile(rb"/(CreationDate|ModDate)\s*\((D:[^)]*)\)")
_HEX_STRING = re.compile(rb"<[0-9A-Fa-f]*>")
_PDF_ID = re.compile(rb"/ID\s*\[\s*<([0-9A-Fa-f]*)>\s*<([0-9A-Fa-f]*)>\s*\]")


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """The (type, body) chunks of a PNG, in order.

    Raises:
        ValueError: when the bytes are not a well-formed PNG.
    """
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG")
    chunks = []
    pos = len(PNG_SIGNATURE)
    while pos < len(data):
        if pos + 8 > len(data):
            raise ValueError("truncated PNG chunk header")
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if len(body) != length:
            raise ValueError("truncated PNG chunk")
        chunks.append((kind, body))
        pos += 12 + length
        if kind == b"IEND":
            break
    return chunks


def build_png(chunks: list[tuple[bytes, bytes]]) -> bytes:
    """A PNG from (type, body) chunks, with correct lengths and CRCs."""
    out = [PNG_SIGNATURE]
    for kind, body in chunks:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        out.append(struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc))
    return b"".join(out)


def normalise_png(data: bytes) -> bytes:
    """The PNG without its time and text chunks (unchanged if it does not parse).

    >>> plain = build_png([(b"IHDR", bytes(13)), (b"IEND", b"")])
    >>> stamped = build_png([(b"IHDR", bytes(13)), (b"tIME", bytes(7)), (b"IEND", b"")])
    >>> normalise_png(stamped) == plain
    True
    """
    try:
        chunks = png_chunks(data)
    except ValueError:
        return data
    kept = [(k, b) for k, b in chunks if k not in _PNG_DROP]
    if len(kept) == len(chunks):
        return data
    return build_png(kept)


def normalise_pdf(data: bytes) -> bytes:
    """The PDF with its dates and document id blanked, keeping every byte offset.

    >>> normalise_pdf(b"/CreationDate (D:20240101120000Z) /ID [<ab12><cd34>]")
    b'/CreationDate (D:00000000000000Z) /ID [<0000><0000>]'
    >>> normalise_pdf(b"/ModDate (D:20240101120000-05'00')")
    b"/ModDate (D:00000000000000Z00'00')"
    """

    def blank_date(match: re.Match[bytes]) -> bytes:
        # Same length, so the cross-reference offsets stay valid; the time-zone sign
        # goes too, so two saves in different zones of equal width compare equal.
        value = re.sub(rb"[+\-Z]", b"Z", re.sub(rb"\d", b"0", match.group(2)))
        return b"/" + match.group(1) + b" (" + value + b")"

    def blank_id(match: re.Match[bytes]) -> bytes:
        return _HEX_STRING.sub(lambda m: b"<" + b"0" * (len(m.group(0)) - 2) + b">", match.group(0))

    out = _PDF_DATES.sub(blank_date, data)
    return _PDF_ID.sub(blank_id, out)


def _media_type(mime: str) -> str:
    return mime.split(";", 1)[0].strip().lower()


def has_stamps(mime: str) -> bool:
    """Whether files of this type carry stamps that :func:`normalise_bytes` removes.

    >>> has_stamps("image/png"), has_stamps("Application/PDF"), has_stamps("text/csv")
    (True, True, False)
    """
    return _media_type(mime) in ("image/png", "application/pdf")


def normalise_bytes(data: bytes, mime: str) -> bytes:
    """Bytes with the non-deterministic parts of their format removed.

    >>> normalise_bytes(b"/CreationDate (D:2024)", "application/pdf")
    b'/CreationDate (D:0000)'
    >>> normalise_bytes(b"/CreationDate (D:2024)", "text/plain")
    b'/CreationDate (D:2024)'
    """
    mime = _media_type(mime)
    if mime == "image/png":
        return normalise_png(data)
    if mime == "application/pdf":
        return normalise_pdf(data)
    return data


def content_fingerprint(data: bytes | Path, mime: str) -> str:
    """The fingerprint the inventory gives this content: normalised first when its format
    carries stamps, so a re-run's chart or file can be compared with the recorded one."""
    from .fingerprints import sha256_bytes, sha256_file

    if isinstance(data, Path):
        if not has_stamps(mime):
            return sha256_file(data)
        data = data.read_bytes()
    return sha256_bytes(normalise_bytes(data, mime))
