/* Endgame tables: what the module's files share (not part of the API). */
#ifndef SOW_TABLES_INTERNAL_H
#define SOW_TABLES_INTERNAL_H

#include "sow/tables.h"

struct tb_level {
    const int8_t *v;   /* values in index order, NULL if not loaded */
    uint64_t entries;
    uint64_t checksum;
    void *map;         /* the file mapping (NULL for levels put from memory) */
    size_t maplen;
};

struct tb_set {
    struct ruleset rs;
    char dir[4096];
    struct tb_index ix;
    uint64_t boards[TB_MAX_LEVEL + 1]; /* boards per state of each level */
    struct tb_level lv[TB_MAX_LEVEL + 1];
};

/* Make level n of s point at values held elsewhere (not owned). */
void tb_set_put_level(struct tb_set *s, int n, const int8_t *v, uint64_t entries);

#endif
