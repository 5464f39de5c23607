"""A zip archive (a ``.pt2``) sized from its directory before any of it is read: the sizes
its records would take once read are in the zip's directory, and a record that would not
fit in memory -- or that is absurd against the file's own size -- is refused with the
numbers, not read until the machine runs out.

torch writes a ``.pt2``'s records as they are (stored, not compressed), its weights among
them (memory-mapped when used, and sized apart: a model whose weights would not fit opens
structure-only).  The other records -- the program's JSON, its pickles -- are read whole and
parsed: a dense JSON takes about 4 times its size as Python objects (measured: GPT-2's
``model.json``, 0.36 MiB, took 1.4 MiB parsed), the program made of it more.  A record
compressed from a small file to gigabytes (a JSON of whitespace, 50 MB in the file, 3 GB
read) was not written by torch and is refused outright.

Example:
    >>> import tempfile, zipfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "bomb.pt2")
    >>> with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    ...     z.writestr("bomb/models/model.json", " " * (200 * 2**20))
    >>> archive_problem(path)[:69]
    "bomb.pt2's record bomb/models/model.json is 200.0 MiB once read, from"
"""

from __future__ import annotations

import os
import zipfile

from fxstudio.core.process.budget import available_memory, format_bytes

#: Bytes of memory a record takes per byte of it, once read and parsed (and made into the
#: program it describes).
READ_FACTOR = 6
#: A record that expands more than this many times from the file, past ABSURD_FROM bytes.
ABSURD_RATIO = 50
ABSURD_FROM = 64 * 2**20
#: The records that are the model's weights: memory-mapped, and sized apart.
WEIGHTS = "/data/weights/"


def archive_problem(path: str) -> str | None:
    """Why the zip archive at ``path`` is not read -- a record that would not fit in memory
    once read, or one compressed past belief -- from its directory alone, or None.  A file
    that is not a zip is left to the reader to say so.  Torch-free (the first picture's)."""
    try:
        with zipfile.ZipFile(path) as archive:
            records = archive.infolist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return None
    name = os.path.basename(path)
    avail = available_memory()
    read = 0
    for r in records:
        if WEIGHTS in f"/{r.filename}":
            continue
        if r.file_size > ABSURD_FROM and r.file_size > ABSURD_RATIO * max(1, r.compress_size):
            return (
                f"{name}'s record {r.filename} is {format_bytes(r.file_size)} once read, from "
                f"{format_bytes(r.compress_size)} in the file "
                f"({r.file_size // max(1, r.compress_size)} times smaller): torch.export does "
                "not compress its records, and no program's record shrinks so. The file is "
                "damaged or was not written by torch.export.save(); save the program again."
            )
        read += r.file_size
    if avail is not None and read * READ_FACTOR > avail:
        return (
            f"Reading {name} would take about {format_bytes(read * READ_FACTOR)}: its "
            f"program's records are {format_bytes(read)}, and a record takes about "
            f"{READ_FACTOR} times its size once read and parsed; {format_bytes(avail)} is "
            "available, so it was not read. Open it on a machine with more memory, or export "
            "a smaller program (fewer layers)."
        )
    return None
