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
 * Block cache (struct tbz_cache, one per loaded tb_set, shared by all the
 * threads probing it): S sets of W = 8 ways, each way one decompressed
 * block (2^bmax bytes, bmax the largest block shift of the set's levels).
 * The set numbers its levels' blocks one after the other (a level's first
 * block is its gbase) and block g = gbase + k goes to set (g / W) mod S,
 * so W consecutive blocks share a set: when the cache holds as many blocks
 * as the levels have (tb_open's default), every block has a way of its own
 * and a warm cache never misses; when it holds fewer, blocks S*W apart
 * compete for a set's ways, the least recently used one giving way.  Each
 * set has its own mutex.
 *
 *   sets[0]  | lock | key[0..7] | stamp[0..7] | hits misses |
 *   sets[1]  ...                                              data: S*W blocks
 *   way w of set s holds its block at data + ((s*W + w) << bmax); key g + 1
 *
 * Worked example: levels 0..16 of oware 2x6 with 16 KiB blocks have 1,863
 * blocks; level 16 (796 blocks) has gbase 1,067.  A 20 MiB cache has 1,280
 * slots, S = 160 sets.  Entry 5,000,000 of level 16 is in block k = 305,
 * g = 1,372, set (1,372 / 8) mod 160 = 11: a probe locks set 11, finds key
 * 1,373 in a way (a hit: the byte is read under the lock) or decompresses
 * the block into the least recently used way (a miss: exactly one block
 * decompressed, under the set's lock and one of the cache's NDCTX zstd
 * contexts, each with its own mutex).
 *
 * Thread-safety: tbz_parse/tbz_block/tbz_block_dctx/tbz_all are reentrant.
 * tbz_probe may be called from any number of threads at once on levels
 * sharing one cache (per-set mutexes; a hit takes one uncontended lock).
 * tbz_cache_new/tbz_cache_free are not concurrent with probes through that
 * cache; tbz_cache_stats and tbz_cache_damage may run alongside probes.
 */
#ifndef SOW_TABLES_COMPRESS_H
#define SOW_TABLES_COMPRESS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sow/rules.h"
#include "sow/status.h"

#define TBZ_VERSION 2
#define TBZ_ZSTD 1
#define TBZ_INDEX_ENTRY 16
#define TBZ_BSHIFT 14 /* 16 KiB blocks (docs/tables.md: size against probe cost) */
#define TBZ_BSHIFT_MIN 8
#define TBZ_BSHIFT_MAX 20
#define TBZ_LEVEL 9   /* zstd level of tables compress */

struct tbz_cache;

struct tbz {
    const uint8_t *base; /* the mapped file */
    size_t size;
    uint64_t entries, nblocks;
    unsigned bshift;
    int level;           /* values lie in [-level, level] */
    uint64_t rawsum;     /* XXH3-64 of the raw values */
    /* Set by the owning tb_set (tb_set_load_level); tbz_parse leaves them 0:
     * the cache its probes go through (NULL: each probe decompresses its
     * block into a buffer of its own, for tests and tools) and the number
     * of the level's first block there (see above). */
    struct tbz_cache *cache;
    uint64_t gbase;
};

/* A cache of floor(bytes / 2^bmax / 8) sets (at least one) of 8 blocks of at
 * most 2^bmax values, or NULL if out of memory or bmax is out of range. */
struct tbz_cache *tbz_cache_new(uint64_t bytes, unsigned bmax);
void tbz_cache_free(struct tbz_cache *c);
/* Bytes of blocks the cache holds at most; the block shift it was made for. */
uint64_t tbz_cache_bytes(const struct tbz_cache *c);
unsigned tbz_cache_bmax(const struct tbz_cache *c);

struct tbz_cache_stats {
    uint64_t hits, misses;   /* misses = blocks decompressed by probes */
};
void tbz_cache_stats(struct tbz_cache *c, struct tbz_cache_stats *st);
/* The first damaged block a probe met (one line in e), true if any. */
bool tbz_cache_damage(struct tbz_cache *c, struct sow_error *e);
/* Record damage found otherwise (tb_set_inflate_level), if the first. */
void tbz_cache_note_damage(struct tbz_cache *c, const struct sow_error *e);

/* How a level is written compressed (NULL: all defaults).  A large level
 * takes minutes, so the writer can be stopped and can say how far it is. */
struct tbz_write_opts {
    int threads;                 /* <= 0: OpenMP's default */
    volatile sig_atomic_t *stop; /* set asynchronously: stop at the next batch of
                                    blocks, SOW_E_INTERRUPTED, no file; may be NULL */
    void (*progress)(void *ctx, double frac); /* the share written, from the
                                                 calling thread; may be NULL */
    void *ctx;
};

/* Write level `level` of rs (values[entries]) compressed into dir, through a
 * temporary file and a rename (replacing a raw file of the same level).
 * SOW_OK, or SOW_E_IO / SOW_E_NOMEM / SOW_E_INTERRUPTED with a one-line
 * reason (and the temporary file removed). */
enum sow_status tbz_write(const char *dir, const struct ruleset *rs, int level,
                          const int8_t *values, uint64_t entries, int zlevel,
                          const struct tbz_write_opts *wo, struct sow_error *e);

/* tbz_write with blocks of 2^b values (TBZ_BSHIFT_MIN..TBZ_BSHIFT_MAX, else
 * SOW_E_INPUT). */
enum sow_status tbz_write_b(const char *dir, const struct ruleset *rs, int level,
                            const int8_t *values, uint64_t entries, int zlevel, unsigned b,
                            const struct tbz_write_opts *wo, struct sow_error *e);

/* Check a mapped version-2 file (header fields already checked by the
 * caller: magic, header checksum, names, entries) and fill *z: the stored
 * payload's checksum, the index (bounds, order).  SOW_OK or SOW_E_INPUT. */
enum sow_status tbz_parse(const uint8_t *map, size_t size, uint64_t entries, int level,
                          const char *path, struct tbz *z, struct sow_error *e);
/* tbz_parse, the stored payload's checksum checked only if payload_sum (a
 * reader of a slice, whose every block is checked as it is decompressed,
 * leaves the whole payload's checksum to one reader: tb_file_read_slice). */
enum sow_status tbz_parse_ex(const uint8_t *map, size_t size, uint64_t entries, int level,
                             const char *path, bool payload_sum, struct tbz *z,
                             struct sow_error *e);

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

/* One value through z->cache (see above); false if idx is out of range or
 * its block is damaged (then recorded for tbz_cache_damage) or memory ran
 * out.  A miss decompresses exactly one block. */
bool tbz_probe(const struct tbz *z, uint64_t idx, int *value);

/* Stored bytes of the file (header, index, blocks). */
static inline uint64_t tbz_stored(const struct tbz *z)
{
    return z->size;
}

#endif
