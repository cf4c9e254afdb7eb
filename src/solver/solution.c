/* Solution files (solution.h; docs/solutions.md "File format"). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "container.h"
#include "fileio.h"
#include "solution.h"
#include "util.h"
#include "sow/search.h"

#define SOL_MAGIC "SOWSOLN1"
#define SOL_VERSION 1      /* 4-byte set cells */
#define SOL_VERSION_WIDE 2 /* 8-byte set cells: 2^32 - 3 positions or more */
#define SOL_HEADER 128
#define SOL_HASH_SCHEME 1
#define SOL_EMPTY UINT32_MAX

enum {
    H_MAGIC = 0,
    H_VERSION = 8,
    H_HSIZE = 12,
    H_RULES = 16,
    H_PITS = 40,
    H_K = 44,
    H_N = 48,
    H_S = 56,
    H_ROOTLVL = 64,
    H_HASH = 68,
    H_CHECK = 72,
    H_PAYLOAD = 80,
    H_HCHECK = 120,
};

struct sol {
    const struct ruleset *rs;
    void *map;
    size_t size;
    int K, root_level;
    uint64_t n, S;
    const uint64_t *root, *keys;
    const int8_t *lo, *hi, *v;
    const uint32_t *set;   /* version 1 */
    const uint64_t *set64; /* version 2 */
};

/* The set's first cell for hash h of S cells (then linear probing), as the
 * closure's own set (closure_internal.h slot_of). */
static inline uint64_t cell_of(uint64_t h, uint64_t S)
{
    return (uint64_t)(((unsigned __int128)h * S) >> 64);
}

/* Payload offsets (from the start of the file) of a file with K, N, S and
 * cw-byte set cells (the set aligned to its cell size). */
struct layout {
    uint64_t root, keys, lo, hi, v, set, end;
};

static struct layout layout_of(int K, uint64_t N, uint64_t S, int cw)
{
    struct layout L;
    L.root = SOL_HEADER;
    L.keys = L.root + 8ULL * (uint64_t)K;
    L.lo = L.keys + 8ULL * (uint64_t)K * N;
    L.hi = L.lo + N;
    L.v = L.hi + N;
    L.set = (L.v + N + (uint64_t)cw - 1) & ~((uint64_t)cw - 1);
    L.end = L.set + (uint64_t)cw * S;
    return L;
}

/* ---- writing ---- */

/* The payload goes through a 64 KB buffer into the output's temporary file
 * (fileio.h), its checksum computed on the way. */
struct writer {
    struct fio_out *o;
    XXH3_state_t *xs;
    uint8_t buf[1 << 16];
    size_t used;
    enum sow_status st;
    struct sow_error err;
};

static void w_flush(struct writer *w)
{
    if (w->st == SOW_OK && w->used)
        w->st = fio_write_all(w->o, w->buf, w->used, &w->err);
    w->used = 0;
}

static void w_put(struct writer *w, const void *p, size_t n)
{
    const uint8_t *b = p;
    XXH3_64bits_update(w->xs, p, n);
    while (n) {
        size_t take = sizeof w->buf - w->used < n ? sizeof w->buf - w->used : n;
        memcpy(w->buf + w->used, b, take);
        w->used += take;
        b += take;
        n -= take;
        if (w->used == sizeof w->buf)
            w_flush(w);
    }
}

/* The payload after the header (docs/solutions.md "File format"): the
 * root's key, every key, lo, hi and V (a closure on disk: level by level),
 * padding, the set. */
static void w_put_cb(void *w, const void *p, size_t n) { w_put(w, p, n); }

/* A closure on disk: its keys, lo, hi or V read through the mapping, the
 * pages given back after (a rank of a job holds its share, not the whole). */
static void w_put_mapped(struct writer *w, const void *p, size_t n)
{
    w_put(w, p, n);
    util_drop_pages(p, n);
}

static enum sow_status put_payload(struct writer *w, const struct clos *c, int K,
                                   const uint64_t *rk, const struct layout *L, uint64_t N,
                                   uint64_t S, uint64_t win, int cw, const char *path,
                                   struct sow_error *e)
{
    w_put(w, rk, 8 * (size_t)K);
    bool disk = clos_on_disk(c);
    if (!disk) {
        const uint64_t *keys = clos_keys(c);
        for (uint64_t i = 0; i < N; i += 1 << 16) {
            uint64_t m = N - i < (1 << 16) ? N - i : (1 << 16);
            w_put(w, keys + i * (uint64_t)K, (size_t)(m * 8 * (uint64_t)K));
        }
        w_put(w, clos_lo(c), (size_t)N);
        w_put(w, clos_hi(c), (size_t)N);
        w_put(w, clos_v(c), (size_t)N);
    } else {
        /* the keys of every level, then lo, hi and V of every level, in the
         * same order (part 0: keys, 1..3: lo, hi, V) */
        for (int part = 0; part < 4; part++)
            for (int l = 0; l <= SOW_MAX_SEEDS; l++) {
                const uint64_t *k;
                const int8_t *x[3];
                uint64_t n = clos_disk_level(c, l, &k, &x[0], &x[1], &x[2]);
                if (!n)
                    continue;
                if (part == 0)
                    w_put_mapped(w, k, (size_t)(n * 8 * (uint64_t)K));
                else
                    w_put_mapped(w, x[part - 1], (size_t)n);
            }
    }
    static const uint8_t zero[8] = {0};
    w_put(w, zero, (size_t)(L->set - (L->v + N)));
    if (disk)
        return sol_disk_set(c, K, S, win, cw, w_put_cb, w, path, e);
    for (uint64_t j = 0; j < S; j++) {
        uint32_t x = clos_cell(c, j);
        uint64_t y = x == SOL_EMPTY ? UINT64_MAX : x;
        if (cw == 4)
            w_put(w, &x, 4);
        else
            w_put(w, &y, 8);
    }
    return SOW_OK;
}

enum sow_status sol_save(const struct ruleset *rs, const struct clos *c, const sow_position *root,
                         const char *path, uint64_t win, int cw, struct sow_error *e)
{
    const int K = clos_key_words(c);
    const uint64_t N = clos_size(c);
    uint64_t rk[8] = {0};
    if (!N || !clos_pack(rs, K, root, rk))
        return sow_fail(e, SOW_E_INPUT, "%s: no solved closure of that position to save", path);
    uint64_t S = clos_cells(c);
    if (clos_on_disk(c)) {
        /* a closure on disk has no set: the file's is built as the
         * closure builds its own (load at most 3/5) */
        S = clos_set_cells_for(N);
    }
    if (cw != 4 && cw != 8)
        cw = N >= UINT32_MAX - 2 ? 8 : 4;
    if (cw == 4 && N >= UINT32_MAX - 2)
        return sow_fail(e, SOW_E_INPUT, "%s: %llu positions need 8-byte set cells", path,
                        (unsigned long long)N);
    enum sow_status st;
    struct layout L = layout_of(K, N, S, cw);
    /* the target checked, a new temporary file beside it (fileio.h rule 2) */
    struct fio_out o;
    struct writer *w = calloc(1, sizeof *w);
    if (!w || !(w->xs = XXH3_createState())) {
        free(w);
        return sow_fail(e, SOW_E_NOMEM, "%s: out of memory", path);
    }
    st = fio_out_begin(&o, path, NULL, e);
    if (st == SOW_OK) {
        w->o = &o;
        XXH3_64bits_reset(w->xs);
        uint8_t h[SOL_HEADER];
        memset(h, 0, sizeof h);
        w->st = fio_write_all(&o, h, sizeof h, &w->err); /* zeros, rewritten at the end */
        struct sow_error pe = {0};
        enum sow_status ps = put_payload(w, c, K, rk, &L, N, S, win, cw, path, &pe);
        w_flush(w);
        if (ps != SOW_OK && w->st == SOW_OK) {
            w->st = ps;
            w->err = pe;
        }
        memcpy(h + H_MAGIC, SOL_MAGIC, 8);
        ct_put32(h + H_VERSION, cw == 4 ? SOL_VERSION : SOL_VERSION_WIDE);
        ct_put32(h + H_HSIZE, SOL_HEADER);
        snprintf((char *)h + H_RULES, 24, "%s", rs->name);
        ct_put32(h + H_PITS, (uint32_t)rs->pits);
        ct_put32(h + H_K, (uint32_t)K);
        ct_put64(h + H_N, N);
        ct_put64(h + H_S, S);
        ct_put32(h + H_ROOTLVL, (uint32_t)rules_board_seeds(rs, root));
        ct_put32(h + H_HASH, SOL_HASH_SCHEME);
        ct_put64(h + H_CHECK, XXH3_64bits_digest(w->xs));
        ct_put64(h + H_PAYLOAD, L.end - SOL_HEADER);
        ct_seal(h, H_HCHECK);
        if (w->st == SOW_OK && pwrite(o.fd, h, sizeof h, 0) != (ssize_t)sizeof h)
            w->st = sow_fail(&w->err, SOW_E_IO, "writing %s: %s", o.tmp,
                             strerror(errno ? errno : EIO));
        if (w->st != SOW_OK) {
            fio_out_abort(&o);
            st = w->st;
            if (e)
                *e = w->err;
        } else {
            st = fio_out_commit(&o, e); /* fsync, rename, fsync of the directory */
        }
    }
    XXH3_freeState(w->xs);
    free(w);
    return st;
}

/* ---- reading ---- */

/* Set cell j's node index, UINT64_MAX if free (either version). */
static inline uint64_t cell(const struct sol *s, uint64_t j)
{
    if (s->set64)
        return s->set64[j];
    return s->set[j] == SOL_EMPTY ? UINT64_MAX : s->set[j];
}

enum sow_status sol_open(const struct ruleset *rs, const char *path, struct sol **out,
                         struct sow_error *e)
{
    enum sow_status st = SOW_E_INPUT;
    *out = NULL;
    int fd;
    /* Non-blocking open, regular files only: a FIFO named like a solution
     * file is refused at once, never waited on. */
    enum sow_status ost = fio_open_input(path, &fd, e);
    if (ost != SOW_OK)
        return ost;
    struct stat sb;
    struct sol *s = calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        return sow_fail(e, SOW_E_NOMEM, "%s: out of memory", path);
    }
#define BAD(...)                                                                                  \
    do {                                                                                          \
        sow_fail(e, st, __VA_ARGS__);                                                             \
        goto fail;                                                                                \
    } while (0)
    if (fstat(fd, &sb) < 0)
        BAD("%s: cannot stat: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        BAD("%s: not a regular file", path);
    s->size = (size_t)sb.st_size;
    if (s->size < SOL_HEADER)
        BAD("%s: truncated or not a solution file (%zu bytes)", path, s->size);
    s->map = mmap(NULL, s->size, PROT_READ, MAP_SHARED, fd, 0);
    if (s->map == MAP_FAILED) {
        s->map = NULL;
        st = SOW_E_IO;
        BAD("%s: cannot map: %s", path, strerror(errno));
    }
    const uint8_t *h = s->map;
    if (memcmp(h + H_MAGIC, SOL_MAGIC, 8) != 0)
        BAD("%s: not a sow solution file (bad magic)", path);
    if (!ct_sealed(h, H_HCHECK))
        BAD("%s: header damaged (header checksum mismatch)", path);
    uint32_t ver = ct_get32(h + H_VERSION);
    if ((ver != SOL_VERSION && ver != SOL_VERSION_WIDE) || ct_get32(h + H_HSIZE) != SOL_HEADER)
        BAD("%s: format version %u, this sow reads versions %d and %d", path, ver, SOL_VERSION,
            SOL_VERSION_WIDE);
    const int cw = ver == SOL_VERSION ? 4 : 8;
    char rules[24];
    memcpy(rules, h + H_RULES, 24);
    rules[23] = 0;
    if (strcmp(rules, rs->name) != 0 || ct_get32(h + H_PITS) != (uint32_t)rs->pits)
        BAD("%s: foreign solution: holds %s 2x%u, expected %s 2x%d", path, rules,
            ct_get32(h + H_PITS), rs->name, rs->pits);
    s->rs = rs;
    s->K = (int)ct_get32(h + H_K);
    s->n = ct_get64(h + H_N);
    s->S = ct_get64(h + H_S);
    s->root_level = (int)ct_get32(h + H_ROOTLVL);
    if (s->root_level < 0 || s->root_level > 127 || s->K != clos_words_for(rs, s->root_level) ||
        ct_get32(h + H_HASH) != SOL_HASH_SCHEME || !s->n || (cw == 4 && s->n >= UINT32_MAX - 2) ||
        s->S <= s->n || s->S > ((uint64_t)1 << 40))
        BAD("%s: header values out of range", path);
    struct layout L = layout_of(s->K, s->n, s->S, cw);
    if (ct_get64(h + H_PAYLOAD) != L.end - SOL_HEADER || s->size != L.end)
        BAD("%s: %s (%zu bytes, expected %llu)", path,
            s->size < L.end ? "truncated" : "size does not match the header", s->size,
            (unsigned long long)L.end);
    if (XXH3_64bits(h + SOL_HEADER, (size_t)(L.end - SOL_HEADER)) != ct_get64(h + H_CHECK))
        BAD("%s: payload damaged (checksum mismatch)", path);
    s->root = (const uint64_t *)(h + L.root);
    s->keys = (const uint64_t *)(h + L.keys);
    s->lo = (const int8_t *)(h + L.lo);
    s->hi = (const int8_t *)(h + L.hi);
    s->v = (const int8_t *)(h + L.v);
    if (cw == 4)
        s->set = (const uint32_t *)(h + L.set);
    else
        s->set64 = (const uint64_t *)(h + L.set);
    /* A file that passes its checksums but breaks these was written wrongly;
     * probing must never loop or read out of bounds. */
    uint64_t used = 0;
    for (uint64_t j = 0; j < s->S; j++) {
        uint64_t x = cell(s, j);
        if (x != UINT64_MAX) {
            if (x >= s->n)
                BAD("%s: set cell %llu out of range", path, (unsigned long long)j);
            used++;
        }
    }
    if (used != s->n)
        BAD("%s: set holds %llu positions, header says %llu", path, (unsigned long long)used,
            (unsigned long long)s->n);
    /* Every key (the root's too) holds at most the root's seeds, so each
     * hole finds its closing zero within the K words (clos_words_for) and
     * clos_unpack never runs off them. */
    const int m = s->root_level;
    if (key_level(s->root, s->K) > m)
        BAD("%s: the root's key holds %d seeds, more than the root's %d", path,
            key_level(s->root, s->K), m);
    for (uint64_t i = 0; i < s->n; i++) {
        if (s->lo[i] < -m || s->hi[i] > m || s->lo[i] > s->hi[i] || s->v[i] < s->lo[i] ||
            s->v[i] > s->hi[i])
            BAD("%s: values out of range at position %llu", path, (unsigned long long)i);
        int l = key_level(&s->keys[i * (uint64_t)s->K], s->K);
        if (l > m)
            BAD("%s: a position's key holds %d seeds, more than the root's %d", path, l, m);
    }
    close(fd);
    *out = s;
    return SOW_OK;
fail:
    if (s->map)
        munmap(s->map, s->size);
    free(s);
    close(fd);
    return e ? e->status : st;
#undef BAD
}

void sol_close(struct sol *s)
{
    if (!s)
        return;
    if (s->map)
        munmap(s->map, s->size);
    free(s);
}

static int64_t find_idx(const struct sol *s, const sow_position *p)
{
    uint64_t w[8] = {0};
    if (rules_board_seeds(s->rs, p) > s->root_level || !clos_pack(s->rs, s->K, p, w))
        return -1;
    uint64_t j = cell_of(clos_hash(w, s->K), s->S);
    for (uint64_t probes = 0; probes < s->S; probes++, j = j + 1 == s->S ? 0 : j + 1) {
        uint64_t x = cell(s, j);
        if (x == UINT64_MAX)
            return -1;
        if (memcmp(&s->keys[x * (uint64_t)s->K], w, 8 * (size_t)s->K) == 0)
            return (int64_t)x;
    }
    return -1;
}

bool sol_find(const struct sol *s, const sow_position *p, int *lo, int *hi, int *v)
{
    int64_t i = find_idx(s, p);
    if (i < 0)
        return false;
    if (lo)
        *lo = s->lo[i];
    if (hi)
        *hi = s->hi[i];
    if (v)
        *v = s->v[i];
    return true;
}

static int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

int sol_move_values(const struct sol *s, const sow_position *p, int *vals)
{
    struct sow_movelist ml;
    if (find_idx(s, p) < 0)
        return -1;
    rules_generate(s->rs, p, &ml);
    for (int k = 0; k < ml.n; k++) {
        const struct sow_child *ch = &ml.c[k];
        int lo, hi, v;
        if (!sol_find(s, &ch->pos, &lo, &hi, &v))
            return -1;
        if (ch->captured[0] + ch->captured[1])
            vals[k] = ch->captured[p->side] - ch->captured[!p->side] - v;
        else
            vals[k] = clampi(rules_cycle_value(s->rs, p), -hi, -lo);
    }
    return ml.n;
}

uint64_t sol_size(const struct sol *s)
{
    return s->n;
}

void sol_position(const struct sol *s, uint64_t i, sow_position *p)
{
    clos_unpack(s->rs, s->K, &s->keys[i * (uint64_t)s->K], p);
}

void sol_root(const struct sol *s, sow_position *p)
{
    clos_unpack(s->rs, s->K, s->root, p);
}

/* ---- the public face (search.h) ---- */

enum sow_status search_solution_open(const struct ruleset *rs, const char *path, struct sol **out,
                                     struct sow_error *e)
{
    return sol_open(rs, path, out, e);
}

void search_solution_close(struct sol *s)
{
    sol_close(s);
}

uint64_t search_solution_size(const struct sol *s)
{
    return sol_size(s);
}

int search_solution_answer(const struct sol *s, const sow_position *p, struct search_result *r,
                           int *vals)
{
    memset(r, 0, sizeof *r);
    int v, nm = sol_move_values(s, p, vals);
    if (nm < 0 || !sol_find(s, p, NULL, NULL, &v))
        return -1;
    struct sow_movelist ml;
    rules_generate(s->rs, p, &ml);
    r->exact = true;
    r->over = ml.n == 0;
    r->value = r->lower = r->upper = v;
    r->best = SOW_MOVE_NONE;
    for (int k = 0; k < nm; k++)
        if (vals[k] == v) {
            r->best = ml.c[k].move;
            break;
        }
    /* the PV: at each position the first move worth its value */
    sow_position hist[SEARCH_MAX_PV + 1], q = *p;
    hist[0] = q;
    int qv = v;
    while (r->pv_len < SEARCH_MAX_PV) {
        int mv[SOW_MAX_PITS + 1];
        int n = sol_move_values(s, &q, mv);
        if (n <= 0)
            break;
        rules_generate(s->rs, &q, &ml);
        int pick = 0;
        for (int k = 0; k < n; k++)
            if (mv[k] == qv) {
                pick = k;
                break;
            }
        r->pv[r->pv_len++] = ml.c[pick].move;
        sow_position c = ml.c[pick].pos;
        bool rep = false;
        for (int j = 0; j < r->pv_len && !rep; j++)
            rep = rules_same_position(&hist[j], &c);
        if (rep) {
            r->pv_repeats = true;
            break;
        }
        if (!sol_find(s, &c, NULL, NULL, &qv))
            break;
        q = c;
        hist[r->pv_len] = q;
    }
    return nm;
}

/* ---- solution files in a tables directory (search.h) ---- */

void search_solution_name(const struct ruleset *rs, const char *dir, int level, char *buf,
                          size_t len)
{
    snprintf(buf, len, "%s/%s-2x%d-%03d.sowsol", dir, rs->name, rs->pits, level);
}

enum sow_status search_solution_find(const struct ruleset *rs, const char *dir,
                                     const sow_position *p, struct sol **out, char *path,
                                     size_t pathlen, struct sow_error *e)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return SOW_OK; /* no directory, no solution files (tb_open reports it) */
    /* the levels named, by a scan: one name per level */
    bool have[SOW_MAX_SEEDS + 1] = {false};
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, "%s-2x%d-", rs->name, rs->pits);
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        int lv;
        char tail[16];
        if (strncmp(nm, prefix, (size_t)plen) != 0 || strlen(nm) != (size_t)plen + 10 ||
            sscanf(nm + plen, "%3d%15s", &lv, tail) != 2 || strcmp(tail, ".sowsol") != 0 ||
            lv < 0 || lv > SOW_MAX_SEEDS)
            continue;
        have[lv] = true;
    }
    closedir(d);
    for (int lv = rules_board_seeds(rs, p); lv <= SOW_MAX_SEEDS; lv++) {
        if (!have[lv])
            continue;
        char buf[4096];
        search_solution_name(rs, dir, lv, buf, sizeof buf);
        struct sol *s;
        enum sow_status st = sol_open(rs, buf, &s, e);
        if (st != SOW_OK)
            return st;
        sow_position root;
        sol_root(s, &root);
        if (rules_board_seeds(rs, &root) != lv) {
            sol_close(s);
            return sow_fail(e, SOW_E_INPUT, "%s: misnamed: its start has %d seeds, the name "
                            "says %d", buf, rules_board_seeds(rs, &root), lv);
        }
        if (sol_find(s, p, NULL, NULL, NULL)) {
            *out = s;
            snprintf(path, pathlen, "%s", buf);
            return SOW_OK;
        }
        sol_close(s);
    }
    return SOW_OK;
}
