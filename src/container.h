/* The checksummed files' shared parts: every file format sow writes (table
 * levels, docs/tables.md "File format"; solution files; the closure's
 * checkpoints and on-disk levels) is a fixed header of little-endian fields
 * that starts with an 8-byte magic and ends with an XXH3-64 of the header's
 * bytes before it, then a payload whose XXH3-64 the header holds.  Each
 * format's own layout is drawn in the header that owns it; what they share
 * is here: the fields' encoding and the header's seal.
 *
 *     offset 0        8                               at       at + 8
 *            | magic | fields (le32, le64) ...        | XXH3-64 of [0, at) |
 *
 * Example: a table level's header seals bytes 0..119 into 120..127
 * (ct_seal(h, 120)); a reader refuses it unless ct_sealed(h, 120).
 *
 * Thread-safety: pure functions of their arguments.
 */
#ifndef SOW_CONTAINER_H
#define SOW_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <xxhash.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the file formats are little-endian and written as the machine's words");

static inline void ct_put32(uint8_t *b, uint32_t v) { memcpy(b, &v, 4); }
static inline void ct_put64(uint8_t *b, uint64_t v) { memcpy(b, &v, 8); }
static inline uint32_t ct_get32(const uint8_t *b)
{
    uint32_t v;
    memcpy(&v, b, 4);
    return v;
}
static inline uint64_t ct_get64(const uint8_t *b)
{
    uint64_t v;
    memcpy(&v, b, 8);
    return v;
}

/* The header's checksum: XXH3-64 of h[0, at) into h[at, at + 8). */
static inline void ct_seal(uint8_t *h, size_t at)
{
    ct_put64(h + at, XXH3_64bits(h, at));
}

/* Whether h[at, at + 8) holds the XXH3-64 of h[0, at). */
static inline bool ct_sealed(const uint8_t *h, size_t at)
{
    return XXH3_64bits(h, at) == ct_get64(h + at);
}

#endif
