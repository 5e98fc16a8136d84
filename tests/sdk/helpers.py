"""Small helpers shared by the tests: names, deterministic data, checks."""

import base64
import hashlib
import io
import random
import re
import uuid

import pytest

ACCOUNT_NAME = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

# Client settings for every test: no retries (a retry would hide the answer
# under test and multiply the run time of a failing test) and bounded waits,
# so that a server that hangs fails a test instead of the whole run.
CLIENT_OPTIONS = {
    "retry_total": 0,
    "connection_timeout": 10,
    "read_timeout": 60,
}


def unique_name(hint="c"):
    """A valid, unique container name (3-63 chars of a-z, 0-9, -) with a readable hint."""
    slug = re.sub(r"[^a-z0-9]+", "-", hint.lower()).strip("-")[:40].strip("-")
    return f"{slug or 'c'}-{uuid.uuid4().hex[:12]}"


def md5(data):
    return hashlib.md5(data).digest()


_CRC64_POLY = 0x9A6C9329AC4BC9B5  # CRC-64/NVME, reflected
_CRC64_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _CRC64_POLY if _c & 1 else _c >> 1
    _CRC64_TABLE.append(_c)


def crc64(data):
    """The CRC64 of Azure Storage (CRC-64/NVME) as `x-ms-content-crc64`
    carries it: its 8 bytes, least significant first."""
    c = 0xFFFFFFFFFFFFFFFF
    for b in data:
        c = _CRC64_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return (c ^ 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")


def crc64_b64(data):
    return base64.b64encode(crc64(data)).decode()


def md5_b64(data):
    return base64.b64encode(md5(data)).decode("ascii")


def error_code(error):
    """The service error code of an SDK exception: its error_code attribute, or
    for the few calls whose exceptions lack it, the x-ms-error-code header."""
    code = getattr(error, "error_code", None)
    if code is None and error.response is not None:
        code = error.response.headers.get("x-ms-error-code")
    return code


def expect_error(error, status, code):
    """Assert that an SDK exception carries this HTTP status and service error code."""
    assert error.status_code == status, f"status {error.status_code}, wanted {status}: {error}"
    got = error_code(error)
    assert got == code, f"error code {got!r}, wanted {code!r}: {error}"


def raises(exception_type, status, code):
    """Context manager: the block must raise exception_type with status and code.

    Usage:  with raises(ResourceNotFoundError, 404, "BlobNotFound"): ...
    """
    return _Raises(exception_type, status, code)


class _Raises:
    def __init__(self, exception_type, status, code):
        self._context = pytest.raises(exception_type)
        self._status = status
        self._code = code

    def __enter__(self):
        self.info = self._context.__enter__()
        return self.info

    def __exit__(self, *exc):
        suppressed = self._context.__exit__(*exc)
        if suppressed:
            expect_error(self.info.value, self._status, self._code)
        return suppressed


# --- Deterministic large data without holding it in memory -------------------

UNIT = 1024 * 1024
_BASE = random.Random(20240903).randbytes(UNIT)


def _unit(index):
    """The index-th MiB of pattern data: a rotation of one random MiB, stamped
    with its index, so that every MiB differs and misplaced chunks are caught."""
    shift = (index * 7919) % UNIT
    body = _BASE[shift:] + _BASE[:shift]
    return index.to_bytes(8, "big") + body[8:]


def pattern(offset, length):
    """Bytes offset .. offset+length of the pattern stream."""
    out = bytearray()
    while length > 0:
        index, within = divmod(offset, UNIT)
        take = min(UNIT - within, length)
        out += _unit(index)[within : within + take]
        offset += take
        length -= take
    return bytes(out)


class PatternReader(io.RawIOBase):
    """A readable, seekable stream of `size` pattern bytes, generated on demand."""

    def __init__(self, size):
        self._size = size
        self._pos = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer):
        count = max(0, min(len(buffer), self._size - self._pos))
        if count:
            buffer[:count] = pattern(self._pos, count)
            self._pos += count
        return count


class VerifyingSink(io.RawIOBase):
    """A writable, seekable stream that checks every write against the pattern
    at its offset and records which bytes were written, keeping no copy."""

    def __init__(self, size):
        self._size = size
        self._pos = 0
        self._written = []  # (start, end) of each write
        self.mismatches = []

    def writable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = base + offset
        return self._pos

    def write(self, data):
        data = bytes(data)
        if data != pattern(self._pos, len(data)):
            self.mismatches.append((self._pos, len(data)))
        self._written.append((self._pos, self._pos + len(data)))
        self._pos += len(data)
        return len(data)

    def check_complete(self):
        """Assert that the writes matched the pattern and cover [0, size) exactly once."""
        assert not self.mismatches, f"bytes differ in writes (offset, length): {self.mismatches[:5]}"
        covered = 0
        for start, end in sorted(self._written):
            assert start == covered, f"gap or overlap at byte {covered} (next write starts at {start})"
            covered = end
        assert covered == self._size, f"{covered} bytes written, wanted {self._size}"
