#!/usr/bin/env python3
"""Spoil a sow table file in one named way (tests/cli/run.sh).

usage: spoil_table.py FILE HOW [OTHER_FILE]
       spoil_table.py -      (lines "FILE HOW [OTHER_FILE]" on stdin: many
                              files spoilt by one Python start)

Raw damage (truncated, bit flips, ...) leaves the checksums stale, as a real
damaged file would.  The 'fixed-*' kinds change a header field or value and
then recompute both XXH3-64 checksums (through libxxhash), so that only the
loader's own field checks can reject the file: another format version, index
scheme or value encoding, a wrong entry count, a value outside [-n, n], or
(compressed files, version 2, where the payload is index and blocks) a block
that only its own checksum in the block index can catch.
Header layout: src/tables/file.c (version @8, scheme @48, entries @56,
encoding @64, payload checksum @72, header checksum of bytes 0..119 @120)."""
import ctypes
import struct
import sys

xxh = ctypes.CDLL('libxxhash.so.0')
xxh.XXH3_64bits.restype = ctypes.c_uint64
xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]


def spoil(path, how, other=None):
    b = bytearray(open(path, 'rb').read())

    def fix():
        b[72:80] = struct.pack('<Q', xxh.XXH3_64bits(bytes(b[128:]), len(b) - 128))
        b[120:128] = struct.pack('<Q', xxh.XXH3_64bits(bytes(b[:120]), 120))

    if how == 'truncated':
        b = b[:-7]
    elif how == 'header-only':
        b = b[:128]
    elif how == 'short-header':
        b = b[:50]
    elif how == 'empty':
        b = bytearray()
    elif how == 'trailing':
        b += b'\0'
    elif how == 'payload-bit':
        b[-3] ^= 0x10
    elif how == 'header-bit':
        b[44] ^= 0x01
    elif how == 'magic':
        b[0:8] = b'NOTATABL'
    elif how == 'other-file':            # another rule set's or level's file under this name
        b = bytearray(open(other, 'rb').read())
    elif how == 'fixed-version':
        b[8:12] = struct.pack('<I', 99); fix()
    elif how == 'fixed-scheme':
        b[48:52] = struct.pack('<I', 7); fix()
    elif how == 'fixed-encoding':
        b[64:68] = struct.pack('<I', 2); fix()
    elif how == 'fixed-entries':
        b[56:64] = struct.pack('<Q', struct.unpack('<Q', b[56:64])[0] + 1); b += b'\0'; fix()
    elif how == 'fixed-rules':           # claims another rule set, self-consistent
        b[16:40] = b'jodu'.ljust(24, b'\0'); fix()
    elif how == 'fixed-value':           # a value no level-n position can have
        b[-1] = 100; fix()
    elif how == 'fixed-block':           # compressed file: a byte of its last block's frame
        b[-6] ^= 0x55; fix()             # spoilt, the stored checksum made to match again
    else:
        sys.exit('spoil_table.py: unknown kind ' + how)
    open(path, 'wb').write(b)


if sys.argv[1] == '-':
    for line in sys.stdin:
        if line.strip():
            spoil(*line.split())
else:
    spoil(*sys.argv[1:4])
