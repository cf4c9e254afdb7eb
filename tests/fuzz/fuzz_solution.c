/* libFuzzer target: the solution-file reader (sol_open) on arbitrary bytes,
 * and the answers of a file it accepts.
 *
 * The input is the file, opened for the rule set and board its header
 * names (where that is one sow knows; else for oware 2x6, which must refuse
 * it in one line).  It is read twice, as fuzz_tables does: as is, and with
 * both XXH3 checksums recomputed (where the header's payload size matches
 * the length), so the fuzzer reaches the checks after them (ranges of the
 * header, of every set cell and every value).
 *
 * An accepted file is probed as sow solve --solution and the engine probe
 * it (search_solution_answer): at its own root and at the first 64 of its
 * positions that are valid.  Probing must stay in the file (ASan: the
 * mapping is the file's length) and end, every answer's value and move
 * values lie in [-root level - captures, root level + captures], and every
 * move of its principal variation is legal (relay positions past
 * FUZZ_RELAY_SEEDS seeds are not probed). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "container.h"
#include "fuzz_common.h"
#include "solver/solution.h"
#include "sow/search.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void probe(const struct ruleset *rs, struct sol *s, const sow_position *p, int level)
{
    struct sow_error e;
    if (rules_validate(rs, p, &e) != SOW_OK ||
        (rs->relay && rules_board_seeds(rs, p) > FUZZ_RELAY_SEEDS))
        return;
    struct search_result r;
    int vals[SOW_MAX_PITS + 1];
    int n = search_solution_answer(s, p, &r, vals);
    if (n < 0)
        return;
    struct sow_movelist ml;
    rules_generate(rs, p, &ml);
    if (n != ml.n)
        fuzz_fail("%s: %d move values for %d moves", rs->name, n, ml.n);
    int most = level + 2 * SOW_MAX_SEEDS;
    if (r.value < -most || r.value > most)
        fuzz_fail("%s: value %d of a level %d file", rs->name, r.value, level);
    for (int k = 0; k < n; k++)
        if (vals[k] < -most || vals[k] > most)
            fuzz_fail("%s: move value %d of a level %d file", rs->name, vals[k], level);
    if (r.pv_len < 0 || r.pv_len > SEARCH_MAX_PV)
        fuzz_fail("%s: a PV of %d moves", rs->name, r.pv_len);
    sow_position q = *p;
    for (int i = 0; i < r.pv_len; i++) {
        rules_generate(rs, &q, &ml);
        int k = rules_find_move(&ml, r.pv[i]);
        if (k < 0)
            fuzz_fail("%s: PV move %d (%d) is not legal", rs->name, i + 1, r.pv[i]);
        q = ml.c[k].pos;
    }
}

static void load(const uint8_t *data, size_t size, const char *what)
{
    const char *path = fuzz_file(data, size);
    struct ruleset rs;
    struct sow_error e;
    char rules[24] = "oware";
    uint32_t pits = 6;
    if (size >= 128) {
        memcpy(rules, data + 16, 23);
        memcpy(&pits, data + 40, 4);
    }
    if (rules_init(&rs, rules, pits > SOW_MAX_PITS ? -1 : (int)pits, -1, &e) != SOW_OK &&
        rules_init(&rs, "oware", 6, 4, &e) != SOW_OK)
        abort();
    struct sol *s = NULL;
    fuzz_clear_error(&e);
    enum sow_status st = sol_open(&rs, path, &s, &e);
    if (st != SOW_OK) {
        if (st != SOW_E_INPUT && st != SOW_E_NOMEM && st != SOW_E_IO)
            fuzz_fail("%s: refused with status %d", what, (int)st);
        fuzz_check_message(what, e.msg);
        return;
    }
    int level;
    memcpy(&level, data + 64, 4);
    sow_position p;
    sol_root(s, &p);
    probe(&rs, s, &p, level);
    uint64_t n = sol_size(s);
    for (uint64_t i = 0, tried = 0; i < n && tried < 64; i++) {
        sol_position(s, i, &p);
        if (rules_validate(&rs, &p, NULL) != SOW_OK)
            continue;
        tried++;
        probe(&rs, s, &p, level);
    }
    sol_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load(data, size, "as is");
    if (size < 128)
        return 0;
    uint8_t *fixed = fuzz_copy(data, size);
    if (ct_get64(fixed + 80) == size - 128) { /* the payload's size: its checksum */
        uint64_t c = XXH3_64bits(fixed + 128, size - 128);
        memcpy(fixed + 72, &c, 8);
    }
    ct_seal(fixed, 120); /* the header's checksum of bytes 0..119 */
    load(fixed, size, "checksums fixed");
    free(fixed);
    return 0;
}
