/* Endgame tables: the lean builder's in-level edges for the relay rule sets
 * (jodu, jodu-ibadan, jodu-starve, odu, jerin), where un-sowing is
 * impractical (every lap's pick-up hole is a choice).  lean.c's move pass
 * hands every in-level edge p -> q to this store, which keeps them on disk,
 * and its solve reads back the predecessor lists of one block of 2^16
 * entries at a time (docs/tables.md "Relay rule sets").
 *
 * Files (temporary, unlinked as soon as they are created, so that nothing is
 * left behind by an interrupt or a crash; in the tables directory):
 *
 *   pair files, one per superbucket (2^sbshift entries, a power of two
 *   >= 2^16, chosen so that the threads' sorts fit the level's memory share):
 *       u64 (q - superbucket's first entry) << 32 | p      8 bytes per edge,
 *       appended in 32 KB pieces (pwrite at a fetch-add offset: no lock)
 *   the list file, written superbucket by superbucket after the move pass,
 *   then only read; for every block b of 2^16 entries (len = 2^16 but the
 *   last), at byte boff[b]:
 *       u32 off[len + 1]     off[i]..off[i+1]: entry i's predecessors
 *       u32 p[off[len]]      predecessor indices (with the edges' multiplicity)
 *
 * Worked example (a level of 3 entries, edges 0->2, 1->2, 2->0, 2->2, one
 * superbucket): pairs (2,0) (2,1) (0,2) (2,2) in any order; block 0 at byte
 * 0: off = 0,1,1,4 then p = 2, 0,1,2 (entry 0 has predecessor 2, entry 1
 * none, entry 2 has 0, 1 and 2; the order inside a list is the pair file's).
 *
 * Memory: per thread a 32 KB buffer per superbucket (move pass), while
 * sorting a superbucket 4 bytes per entry and 4 per edge of it (one per
 * thread at a time), in the solve one block's lists per thread; boff 8 bytes
 * per block.
 *
 * Thread-safety: lrel_put and lrel_flush from any thread w < threads at once
 * (each its own buffers); lrel_read from any thread (pread, its own buffer);
 * lrel_new, lrel_sort and lrel_free from one thread.
 */
#ifndef SOW_TABLES_LEAN_RELAY_H
#define SOW_TABLES_LEAN_RELAY_H

#include <stdbool.h>
#include <stdint.h>

#include "sow/status.h"
#include "progress.h"

#define LREL_BSHIFT 16 /* blocks of 2^16 entries: the unit the solve reads */
#define LREL_BUF 4096  /* pairs per thread buffer (32 KB) */

struct lrel_buf {
    uint64_t n;
    uint64_t pair[LREL_BUF];
};

struct lrel {
    uint64_t E, nblocks, S;
    int sbshift, threads, pits;
    int *pfd;             /* S pair files (-1: none yet) */
    uint64_t *psize;      /* bytes in each (fetch-add) */
    int lfd;              /* the list file */
    uint64_t *boff;       /* nblocks + 1 byte offsets into the list file */
    struct lrel_buf *buf; /* threads * S buffers */
    uint64_t maxblock;    /* bytes of the largest block's lists */
    uint64_t edges;       /* in-level edges of the level */
    double sortbytes;     /* memory the sort used at most (all threads) */
    int err;              /* first errno of a failed read or write (0: none) */
    char dir[4096];       /* where the files are */
};

/* Bytes the store needs at most while a level of E entries is built with
 * `threads` threads on 2 x pits (besides the builder's nodes and bitmaps). */
double lrel_memory(uint64_t E, int pits, int threads);

/* A store for a level of E entries; dir: where the temporary files go (NULL:
 * $TMPDIR or /tmp).  SOW_OK, SOW_E_NOMEM or SOW_E_IO (the directory is not
 * writable), with a reason in *e. */
enum sow_status lrel_new(struct lrel *r, uint64_t E, int pits, int threads, const char *dir,
                         struct sow_error *e);

/* A full buffer of superbucket s to its pair file (lrel_put's slow path). */
void lrel_spill(struct lrel *r, uint64_t s, struct lrel_buf *b);

/* Thread w's edge p -> q (q's predecessor p). */
static inline void lrel_put(struct lrel *r, int w, uint64_t q, uint32_t p)
{
    uint64_t s = q >> r->sbshift;
    struct lrel_buf *b = &r->buf[(uint64_t)w * r->S + s];
    b->pair[b->n++] = (q - (s << r->sbshift)) << 32 | p;
    if (b->n == LREL_BUF)
        lrel_spill(r, s, b);
}

/* Thread w's buffers to the files (at the end of the move pass). */
void lrel_flush(struct lrel *r, int w);

/* The pair files into the list file (parallel over superbuckets; each pair
 * file is closed, freeing its disk space, once sorted).  Progress counts
 * entries in pr's current phase; stops early (SOW_E_INTERRUPTED) when
 * tb_stopped(opt).  SOW_OK, SOW_E_IO, SOW_E_NOMEM, with a reason in *e. */
enum sow_status lrel_sort(struct lrel *r, int threads, struct tb_progress *pr,
                          const struct tb_build_opts *opt, struct sow_error *e);

/* Block b's lists into *buf (grown to r->maxblock as needed): *off and *p
 * as drawn above.  False (errno in r->err) on a read error or no memory. */
bool lrel_read(struct lrel *r, uint64_t b, uint32_t **buf, uint64_t *cap, const uint32_t **off,
               const uint32_t **p);

/* Entry i of block b alone: its predecessors into *buf (grown as needed),
 * *k of them at *list; two small reads (for blocks with few final nodes).
 * False (errno in r->err) on a read error or no memory. */
bool lrel_read_list(struct lrel *r, uint64_t b, uint64_t i, uint32_t **buf, uint64_t *cap,
                    const uint32_t **list, uint32_t *k);

void lrel_free(struct lrel *r);

#endif
