/* libFuzzer target: the endgame-table file loader (tb_file_load) on
 * arbitrary bytes.
 *
 * The input is the file.  It is loaded twice from a memfd:
 *  1. as is: random damage must be rejected with a one-line message (the
 *     header and payload checksums make acceptance of a damaged file
 *     practically impossible);
 *  2. with both XXH3 checksums recomputed, so the fuzzer gets past them and
 *     exercises every later header check (rule set, size, level, states,
 *     entries, file length) on consistent-looking files.
 * An accepted file is read completely (ASan: the mapping covers it), must be
 * accepted again when the expected rule set and level are named, and its
 * header must describe exactly the file's length, and every value must lie
 * in [-level, level]. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "container.h"
#include "fuzz_common.h"
#include "tables/tables.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void load(const uint8_t *data, size_t size, const char *what)
{
    const char *path = fuzz_file(data, size);
    struct tb_header h;
    const int8_t *v = NULL;
    void *map = NULL;
    size_t maplen = 0;
    struct sow_error e;
    memset(e.msg, 'x', sizeof e.msg - 1);
    e.msg[sizeof e.msg - 1] = 0;
    if (tb_file_load(path, NULL, 0, &h, &v, &map, &maplen, &e) != SOW_OK) {
        fuzz_check_message(what, e.msg);
        return;
    }
    if (h.entries + TB_HEADER_SIZE != size || maplen != size)
        fuzz_fail("%s: accepted %zu bytes for %llu entries", what, size,
                  (unsigned long long)h.entries);
    long sum = 0, bad = 0;
    for (uint64_t i = 0; i < h.entries; i++) {
        sum += v[i];
        bad += v[i] > (int)h.level || v[i] < -(int)h.level;
    }
    if (bad)
        fuzz_fail("%s: accepted a %s level %u file with %ld values outside +-%u", what, h.rules,
                  h.level, bad, h.level);
    tb_file_unmap(map, maplen);
    struct ruleset rs;
    if (rules_init(&rs, h.rules, (int)h.pits, 0, &e) != SOW_OK)
        fuzz_fail("%s: accepted a file of unknown rules '%s' 2x%u: %s", what, h.rules, h.pits,
                  e.msg);
    if (tb_file_load(path, &rs, (int)h.level, &h, NULL, NULL, NULL, &e) != SOW_OK)
        fuzz_fail("%s: accepted without rules, rejected as %s level %u: %s", what, rs.name,
                  h.level, e.msg);
    (void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load(data, size, "as is");
    if (size >= TB_HEADER_SIZE) {
        uint8_t *fixed = fuzz_copy(data, size);
        uint64_t c = XXH3_64bits(fixed + TB_HEADER_SIZE, size - TB_HEADER_SIZE);
        memcpy(fixed + 72, &c, 8); /* payload checksum (H_CHECKSUM, src/tables/file.c) */
        ct_seal(fixed, 120);       /* the header's checksum of bytes 0..119 */
        load(fixed, size, "checksums fixed");
        free(fixed);
    }
    return 0;
}
