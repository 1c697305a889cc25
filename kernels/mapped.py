"""Exact inner-product top-k over a float16 matrix file, searched in place by FAISS.

The matrix file (raw row-major float16, no header: the embedding index's `<tool>.f16`) is
memory-mapped read-only and shared: every process that searches it maps the same page-cache
pages, so N processes hold one copy per node, not N float32 copies. FAISS scans it with its
fp16 scalar-quantizer kernel (IndexScalarQuantizer QT_fp16): each float16 value is widened to
float32 exactly and accumulated in float32, so the scores are those of a flat float32 search
of the same values (to the last bit of summation order) and the neighbours the same.

How FAISS is pointed at the file without a copy: FAISS reads an index "zero-copy" from one
contiguous buffer (`ZeroCopyIOReader`, FAISS >= 1.11), its codes then being a view into that
buffer. The buffer is spliced in virtual memory: an anonymous region is reserved, the 81-byte
index header FAISS expects is written at the end of its first page(s), and the file is mapped
over the rest with MAP_FIXED, so header and matrix are contiguous while the matrix stays the
file's own shared pages. Linux and macOS; elsewhere, or on an older FAISS,
`mapped_flat_supported()` is False and callers stream the matrix instead (`kernels.topk`).
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import os
import struct
import sys
import weakref
from typing import Any

import numpy as np

_MAP_FIXED = 0x10           # the same on Linux and macOS (not exported by the mmap module)
_HEADER_NTOTAL = 8          # offset of ntotal (int64) after the fourcc "IxSQ" and d (int32)


class MappedUnsupported(RuntimeError):
    """This platform or FAISS build cannot search a mapped matrix in place."""


def _faiss() -> Any | None:
    try:
        import faiss
    except ImportError:
        return None
    return faiss


def mapped_flat_supported() -> bool:
    """True when `MappedFlatIP` can work here: Linux or macOS, and a FAISS (>= 1.11) that
    reads an fp16 scalar-quantizer index zero-copy from a buffer laid out as expected (checked
    once on a tiny index)."""
    faiss = _faiss()
    return (faiss is not None and hasattr(faiss, "ZeroCopyIOReader")
            and sys.platform in ("linux", "darwin") and _zero_copy_works(faiss))


@functools.cache
def _zero_copy_works(faiss: Any) -> bool:
    x = np.arange(12, dtype=np.float16).reshape(3, 4)
    try:
        buf = np.frombuffer(sq_fp16_header(faiss, 3, 4) + x.tobytes(), dtype=np.uint8).copy()
        index = faiss.read_index(faiss.ZeroCopyIOReader(faiss.swig_ptr(buf), buf.size))
        owned = getattr(index.codes, "is_owned", True)
        ok = not (owned() if callable(owned) else owned)
        return ok and index.reconstruct(2).tolist() == x[2].astype(np.float32).tolist()
    except (MappedUnsupported, RuntimeError, TypeError, AttributeError):
        return False


def _libc() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int64]
    libc.munmap.restype = ctypes.c_int
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


def sq_fp16_header(faiss: Any, n: int, dim: int) -> bytes:
    """The bytes FAISS writes before the codes of an IndexScalarQuantizer (fp16, inner
    product) holding `n` rows of `dim`: serialised from an empty index, then ntotal and the
    codes' byte count patched in. MappedUnsupported if the layout is not the one expected."""
    empty = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16,
                                       faiss.METRIC_INNER_PRODUCT)
    hdr = bytearray(faiss.serialize_index(empty).tobytes())
    if (len(hdr) < 24 or hdr[:4] != b"IxSQ" or struct.unpack_from("<i", hdr, 4)[0] != dim
            or struct.unpack_from("<q", hdr, _HEADER_NTOTAL)[0] != 0
            or struct.unpack_from("<Q", hdr, len(hdr) - 8)[0] != 0):
        raise MappedUnsupported("unexpected FAISS IndexScalarQuantizer serialisation")
    struct.pack_into("<q", hdr, _HEADER_NTOTAL, n)
    struct.pack_into("<Q", hdr, len(hdr) - 8, n * dim * 2)
    return bytes(hdr)


def _unmap(libc: Any, base: int, size: int) -> None:
    libc.munmap(base, size)


class MappedFlatIP:
    """Exact top-k by inner product over the float16 matrix in `path` ((n, dim), row-major),
    searched in place (see the module doc). Same contract as FAISS IndexFlatIP: results by
    score descending, -1 where fewer than k rows exist. Rows and queries should be
    L2-normalised (scores are then cosine similarities)."""

    def __init__(self, path: str | os.PathLike[str], n: int, dim: int) -> None:
        if not mapped_flat_supported():
            raise MappedUnsupported("needs FAISS >= 1.11 (ZeroCopyIOReader) on Linux or macOS")
        if n <= 0 or dim <= 0:
            raise ValueError(f"MappedFlatIP needs rows and columns, got ({n}, {dim})")
        faiss = _faiss()
        nbytes = n * dim * 2
        size = os.path.getsize(path)
        if size != nbytes:
            raise ValueError(f"{path}: {size} bytes, ({n}, {dim}) float16 needs {nbytes}")
        hdr = sq_fp16_header(faiss, n, dim)
        page = mmap.PAGESIZE
        pre = -(-len(hdr) // page) * page
        libc = _libc()
        failed = ctypes.c_void_p(-1).value
        total = pre + nbytes
        base = libc.mmap(None, total, mmap.PROT_READ | mmap.PROT_WRITE,
                         mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        if base in (None, failed):
            err = ctypes.get_errno()
            raise OSError(err, f"reserving {total} bytes of address space: {os.strerror(err)}")
        self._finalizer = weakref.finalize(self, _unmap, libc, base, total)
        ctypes.memmove(base + pre - len(hdr), hdr, len(hdr))
        fd = os.open(path, os.O_RDONLY)
        try:
            got = libc.mmap(base + pre, nbytes, mmap.PROT_READ, mmap.MAP_SHARED | _MAP_FIXED,
                            fd, 0)
        finally:
            os.close(fd)
        if got != base + pre:
            err = ctypes.get_errno()
            self._finalizer()
            raise OSError(err, f"{path}: mapping the matrix failed: {os.strerror(err)}")
        reader = faiss.ZeroCopyIOReader(faiss.cast_integer_to_uint8_ptr(base + pre - len(hdr)),
                                        len(hdr) + nbytes)
        index = faiss.read_index(reader)
        owned = getattr(index.codes, "is_owned", True)
        if (index.ntotal != n or index.d != dim or index.code_size != 2 * dim
                or (owned() if callable(owned) else owned)):
            self._finalizer()
            raise MappedUnsupported("FAISS did not read the matrix as a zero-copy view")
        self._index = index
        self.path = str(path)
        self.n, self.dim = n, dim

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, row ids), each (n_queries, k)."""
        q = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        if self._index is None:
            raise ValueError(f"{self.path}: search after close()")
        return self._index.search(q, k)

    def close(self) -> None:
        """Drop the FAISS view, then unmap (also done when the object is collected)."""
        self._index = None
        self._finalizer()
