"""Independent reader for the tests: what each Parquet file holds against what it weighs.

For every file it prints the file's bytes, the bytes of its encoded images, and its content: the bytes of every value it holds, read
back with pyarrow (not the writer's library): each string or binary value's length (image bytes
included) and each fixed-width value's width, nulls and list/struct framing counted as nothing.
A lean file is close to its content (text columns compress below it; metadata adds a little).

usage: parquet_overhead.py FILE.parquet [FILE.parquet ...]
"""
import json
import os
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def value_bytes(array):
    """Bytes of the values an Arrow array holds, recursing into lists and structs."""
    if isinstance(array, pa.ChunkedArray):
        return sum(value_bytes(chunk) for chunk in array.chunks)
    kind = array.type
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return value_bytes(array.flatten())
    if pa.types.is_struct(kind):
        # Struct.flatten applies the struct's own nulls to its children.
        return sum(value_bytes(child) for child in array.flatten())
    if pa.types.is_binary(kind) or pa.types.is_string(kind) or pa.types.is_large_binary(kind) or pa.types.is_large_string(kind):
        total = pc.sum(pc.binary_length(array)).as_py()
        return total or 0
    if pa.types.is_boolean(kind):
        # One byte per value: a JSON true/false or a Python bool is no smaller.
        return len(array) - array.null_count
    return (len(array) - array.null_count) * (kind.bit_width // 8)


def image_bytes(table):
    """Bytes of the encoded images: the `bytes` of the `image` struct or of each `images` item."""
    total = 0
    for name in ("image", "images"):
        if name not in table.column_names:
            continue
        column = table.column(name)
        for chunk in column.chunks:
            structs = chunk.flatten() if name == "images" else chunk
            total += value_bytes(structs.field("bytes"))
    return total


def binary_columns_with_statistics(path):
    """Binary columns (text, image bytes) whose chunk metadata holds statistics in any row group.

    Set, not only min/max: pyarrow hides the min/max a writer of unknown sort order stored (the
    deprecated `min`/`max` fields), though the bytes are in the file all the same."""
    meta = pq.ParquetFile(path).metadata
    found = set()
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            if chunk.physical_type == "BYTE_ARRAY" and chunk.is_stats_set:
                found.add(chunk.path_in_schema)
    return sorted(found)


def main(paths):
    out = []
    for path in paths:
        table = pq.read_table(path)
        out.append({
            "path": path,
            "rows": table.num_rows,
            "file_bytes": os.path.getsize(path),
            "content_bytes": sum(value_bytes(column) for column in table.columns),
            "image_bytes": image_bytes(table),
            "binary_columns_with_statistics": binary_columns_with_statistics(path),
        })
    json.dump({"files": out}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
