/* Endgame tables: block-compressed level files (format version 2).
 *
 * Layout (little-endian; docs/tables.md "Compressed files"):
 *
 *   0    128-byte header as version 1 (tables.h, file.c), except:
 *          version 2; u32 at 68 = 1 (zstd); checksum (72) = XXH3-64 of every
 *          byte after the header (index and blocks: the whole stored payload);
 *          u32 at 88 = block shift b (a block holds 2^b values), u64 at 96 =
 *          block count K, u64 at 104 = XXH3-64 of the raw values (version
 *          1's checksum, so `tables info` shows the same for both)
 *   128  index: K+1 entries of 16 bytes {u64 offset of block k in the file,
 *          u64 XXH3-64 of block k's raw values}; entry K = {file size, 0}
 *   ...  K zstd frames, block k = values [k 2^b, min((k+1) 2^b, E))
 *
 * Worked example: a level of 100,000 values with b = 14 has K = 7 blocks
 * (6 of 16,384 and one of 1,696); the index is 8 x 16 = 128 bytes at 128;
 * block 0 starts at 256.  A probe of entry 40,000 reads index entry 2
 * (40,000 >> 14), decompresses bytes [off2, off3) into 16,384 values, checks
 * their XXH3-64 against the index, and returns value 40,000 - 32,768.
 *
 * Thread-safety: tbz_parse/tbz_block/tbz_all are reentrant; tbz_probe uses
 * a cache of recent blocks private to the calling thread (no locks, no
 * sharing), freed when the thread exits.
 */
#ifndef SOW_TABLES_COMPRESS_H
#define SOW_TABLES_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sow/rules.h"
#include "sow/status.h"

#define TBZ_VERSION 2
#define TBZ_ZSTD 1
#define TBZ_INDEX_ENTRY 16
#define TBZ_BSHIFT 14 /* 16 KiB blocks (docs/tables.md: size against probe cost) */
#define TBZ_LEVEL 9   /* zstd level of tables compress */

struct tbz {
    const uint8_t *base; /* the mapped file */
    size_t size;
    uint64_t entries, nblocks;
    unsigned bshift;
    int level;           /* values lie in [-level, level] */
    uint64_t rawsum;     /* XXH3-64 of the raw values */
};

/* Write level `level` of rs (values[entries]) compressed into dir, through a
 * temporary file and a rename (replacing a raw file of the same level).
 * SOW_OK, or SOW_E_IO / SOW_E_NOMEM with a one-line reason. */
enum sow_status tbz_write(const char *dir, const struct ruleset *rs, int level,
                          const int8_t *values, uint64_t entries, int zlevel, int threads,
                          struct sow_error *e);

/* Check a mapped version-2 file (header fields already checked by the
 * caller: magic, header checksum, names, entries) and fill *z: the stored
 * payload's checksum, the index (bounds, order).  SOW_OK or SOW_E_INPUT. */
enum sow_status tbz_parse(const uint8_t *map, size_t size, uint64_t entries, int level,
                          const char *path, struct tbz *z, struct sow_error *e);

/* Values of block k into out (2^bshift bytes), checked against the index
 * checksum and the level's range.  Returns the count, or -1 with a reason
 * (status SOW_E_INPUT: the block is damaged). */
int64_t tbz_block(const struct tbz *z, uint64_t k, int8_t *out, struct sow_error *e);

/* tbz_block with a decompression context of the caller's (NULL: a fresh one). */
struct ZSTD_DCtx_s;
int64_t tbz_block_dctx(const struct tbz *z, uint64_t k, int8_t *out, struct ZSTD_DCtx_s *dc,
                       struct sow_error *e);

/* Every value into out[entries] (blocks in parallel): SOW_OK, SOW_E_INPUT
 * (damaged) or SOW_E_NOMEM. */
enum sow_status tbz_all(const struct tbz *z, int8_t *out, int threads, struct sow_error *e);

/* One value through the calling thread's cache of recent blocks; false if
 * its block is damaged (or memory ran out). */
bool tbz_probe(const struct tbz *z, uint64_t idx, int *value);

/* Stored bytes of the file (header, index, blocks). */
static inline uint64_t tbz_stored(const struct tbz *z)
{
    return z->size;
}

#endif
