/* Endgame tables: what the module's files share (not part of the API).
 * The probe side (index.c, file.c) defines all of it; the build side
 * (build.c) uses it to add levels to sets. */
#ifndef SOW_TABLES_INTERNAL_H
#define SOW_TABLES_INTERNAL_H

#include "sow/tables_probe.h"

struct tbz; /* compress.h */

struct tb_level {
    const int8_t *v;   /* values in index order, NULL if not loaded */
    uint64_t entries;
    uint64_t checksum;
    void *map;         /* the file mapping (NULL for levels put from memory) */
    size_t maplen;
    int8_t *own;       /* values owned by the set (tb_set_own_level), else NULL */
    int8_t *lohi;      /* owned forced bounds (lo, hi) per entry, or NULL */
    struct tbz *z;     /* a compressed level kept compressed (v NULL); map is its file */
    bool z_borrowed;   /* z is another set's (tb_set_borrow): not freed here */
};

struct tb_set {
    struct ruleset rs;
    char dir[4096];
    struct tb_index ix;
    uint64_t boards[TB_MAX_LEVEL + 1]; /* boards per state of each level */
    struct tb_level lv[TB_MAX_LEVEL + 1];
    bool keep_compressed; /* tb_open: compressed levels stay so (else decompressed on load) */
    struct tbz_cache *cache; /* blocks of this set's own compressed levels (compress.h) */
    uint64_t next_block;     /* blocks of its compressed levels so far (tbz gbase) */
};

/* Make level n of s point at values held elsewhere (not owned). */
void tb_set_put_level(struct tb_set *s, int n, const int8_t *v, uint64_t entries);
/* Give level n of s values v and bounds lohi (malloc'd, owned by s from now,
 * freed by tb_close), replacing what it held. */
void tb_set_own_level(struct tb_set *s, int n, int8_t *v, int8_t *lohi, uint64_t entries);

/* Decompress compressed level n of s into values s owns (a borrowed level's
 * file stays its owner's), for readers of whole levels (tb_mem's builds).
 * SOW_OK (also if n is raw or not loaded), SOW_E_INPUT (damaged) or
 * SOW_E_NOMEM.  Not concurrent with probes of s.  (zwrite.c) */
enum sow_status tb_set_inflate_level(struct tb_set *s, int n, int threads, struct sow_error *e);

#endif
