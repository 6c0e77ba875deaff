# Writes the Parquet fixtures of tests/can/parquet_frame_reader_test.cpp into the directory given as
# the first argument, with pyarrow (the Python that provided the Arrow C++ build), so the tests see
# files exactly as the real dataset tooling writes them. scripts/sanitize.sh seeds the Parquet
# fuzzer with the same files.
import sys, pyarrow as pa, pyarrow.parquet as pq
out = sys.argv[1]

def write(name, columns, **kw):
    pq.write_table(pa.table(columns), f"{out}/{name}.parquet", compression="snappy", **kw)

write("basic", {
    "timestamp": pa.array([1672531200.0, 1672531200.000023, 1672531200.5, 1.25], pa.float64()),
    "id": pa.array([0x1E5, 0xF9, 0x7FF, 0x1FFFFFFF], pa.uint32()),
    "data_field": pa.array(["460196E001FE6701", "9301000000", "", "deadbeef"]),
    "label": pa.array([0, 1, 0, 1], pa.uint8()),
    "source_file": pa.array(["a.csv"] * 4),
})
write("padded", {
    "timestamp": pa.array([1.0, 2.0]), "id": pa.array([0x1E5, 0xF9], pa.uint32()),
    "data_field": pa.array(["DEADBEEF\t", " 0102 \r\n"]), "label": pa.array([0, 1], pa.uint8()),
})
write("other_types", {
    "label": pa.array([True, False]),
    "id": pa.array([5, 6], pa.int16()),
    "timestamp": pa.array([0.5, 0.75], pa.float32()),
    "data_field": pa.array(["01", "0203"], pa.large_string()),
})
n = 1000
write("many", {
    "timestamp": pa.array([i * 0.5 for i in range(n)], pa.float64()),
    "id": pa.array([i % 0x800 for i in range(n)], pa.int64()),
    "data_field": pa.array(["%02X" % (i % 256) * (i % 9) for i in range(n)]),
    "label": pa.array([int(i % 3 == 0) for i in range(n)], pa.int8()),
}, row_group_size=128)
write("bad_rows", {
    "timestamp": pa.array([1.0, 2.0, 3.0, 4.0, None, 6.0, 7.0, 8.0], pa.float64()),
    "id": pa.array([1, 2, 3, None, 5, 6, 7, 0x20000000], pa.uint32()),
    "data_field": pa.array(["00", "0G", "000102030405060708", "00", "00", "00", "00", "00"]),
    "label": pa.array([0, 0, 0, 0, 0, 2, 1, 0], pa.uint8()),
})
write("implausible_timestamp", {
    "timestamp": pa.array([1.0, 1e308, -2e11], pa.float64()),
    "id": pa.array([1, 2, 3], pa.uint32()), "data_field": pa.array(["00"] * 3),
    "label": pa.array([0, 0, 0], pa.uint8()),
})
write("negative_id", {
    "timestamp": pa.array([1.0]), "id": pa.array([-1], pa.int32()),
    "data_field": pa.array(["00"]), "label": pa.array([0], pa.uint8()),
})
write("no_label", {
    "timestamp": pa.array([1.0]), "id": pa.array([1], pa.uint32()), "data_field": pa.array(["00"]),
})
write("string_id", {
    "timestamp": pa.array([1.0]), "id": pa.array(["1E5"]), "data_field": pa.array(["00"]),
    "label": pa.array([0], pa.uint8()),
})
write("empty_table", {
    "timestamp": pa.array([], pa.float64()), "id": pa.array([], pa.uint32()),
    "data_field": pa.array([], pa.string()), "label": pa.array([], pa.uint8()),
})
data = open(f"{out}/many.parquet", "rb").read()
open(f"{out}/truncated.parquet", "wb").write(data[: len(data) // 2])
body = bytearray(data)
for i in range(8, len(body) // 2):  # keep the magic and the footer, wreck the pages
    body[i] = 0xFF
open(f"{out}/garbled.parquet", "wb").write(bytes(body))


# A dictionary page whose header claims 2 GiB uncompressed, what a flipped length in a corrupt file
# looks like: Arrow would allocate the claimed size before finding that the page does not
# decompress to it. The header grows by 4 bytes and the page's compressed bytes shrink by 4, so
# every offset in the footer stays right.
def varint_at(raw, i):
    value, shift = 0, 0
    while True:
        byte = raw[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def zigzag_varint(value):
    value *= 2  # zigzag encoding of a non-negative i32
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


data = open(f"{out}/many.parquet", "rb").read()
label = pq.ParquetFile(f"{out}/many.parquet").metadata.row_group(0).column(3)
start, end = label.dictionary_page_offset, label.data_page_offset
# Thrift compact PageHeader: i32 fields 1 (type), 2 (uncompressed size), 3 (compressed size).
fields, i = [], start
for _ in range(3):
    assert data[i] == 0x15
    value, i = varint_at(data, i + 1)
    fields.append(value // 2)
rest_of_header_end = end - fields[2]
header = (b"\x15" + zigzag_varint(fields[0]) + b"\x15" + zigzag_varint(2**31 - 1) + b"\x15" +
          zigzag_varint(fields[2] - 4) + data[i:rest_of_header_end])
page = header + data[rest_of_header_end:end - 4]
assert len(page) == end - start
open(f"{out}/oversized_page.parquet", "wb").write(data[:start] + page + data[end:])
