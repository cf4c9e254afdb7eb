/* Endgame tables: the lean builder's in-level edges on disk, for the relay
 * rule sets (layout and thread-safety: lean_relay.h). */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lean_relay.h"
#include "util.h"

#define LREL_CHUNK 131072 /* pairs per read while sorting (1 MB) */
#define LREL_SORT_THREADS 4 /* superbuckets sorted at once, at most */

/* ---- files ------------------------------------------------------------------ */

static const char *tmp_dir(const char *dir)
{
    return dir && *dir ? dir : util_tmpdir();
}

/* A temporary file in dir, unlinked at once (freed when closed). */
static int tmp_fd(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.sow-lean-relay-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

static void note_err(struct lrel *r, int err)
{
    int none = 0;
    __atomic_compare_exchange_n(&r->err, &none, err ? err : EIO, false, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
}

static bool full_pwrite(int fd, const void *b, uint64_t len, uint64_t off)
{
    const char *c = b;
    while (len) {
        ssize_t k = pwrite(fd, c, len, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = ENOSPC;
            return false;
        }
        c += k, len -= (uint64_t)k, off += (uint64_t)k;
    }
    return true;
}

static bool full_pread(int fd, void *b, uint64_t len, uint64_t off)
{
    char *c = b;
    while (len) {
        ssize_t k = pread(fd, c, len, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO; /* the file is shorter than written: damaged */
            return false;
        }
        c += k, len -= (uint64_t)k, off += (uint64_t)k;
    }
    return true;
}

/* ---- sizes -------------------------------------------------------------------- */

static int sort_threads(int threads)
{
    return threads < 1 ? 1 : threads > LREL_SORT_THREADS ? LREL_SORT_THREADS : threads;
}

/* Superbuckets of 2^k entries: the largest k whose sorts (4 bytes per entry
 * and at most 4 * pits per entry of edges, each sorting thread) fit one byte
 * per position of the level (4 MB at least), with every list offset of a
 * superbucket under 2^32. */
static int choose_sbshift(uint64_t E, int pits, int threads)
{
    double budget = (double)E < 4e6 ? 4e6 : (double)E;
    double c = (4.0 + 4.0 * pits) * sort_threads(threads);
    int k = LREL_BSHIFT;
    while (k < 40 && ((uint64_t)1 << k) < E && c * (double)((uint64_t)1 << (k + 1)) <= budget &&
           ((uint64_t)(pits + 1) << (k + 1)) < ((uint64_t)1 << 32))
        k++;
    return k;
}

double lrel_memory(uint64_t E, int pits, int threads)
{
    int k = choose_sbshift(E, pits, threads);
    uint64_t sb = (uint64_t)1 << k, S = E ? (E + sb - 1) >> k : 1;
    double ent = (double)(sb < E ? sb : E);
    double bins = (double)threads * (double)S * sizeof(struct lrel_buf);
    double sort = sort_threads(threads) * ((4.0 + 4.0 * pits) * ent + 8.0 * LREL_CHUNK);
    double blk = (double)(E < ((uint64_t)1 << LREL_BSHIFT) ? E : (uint64_t)1 << LREL_BSHIFT);
    double solve = threads * (4.0 + 4.0 * pits) * (blk + 1);
    double m = bins > sort ? bins : sort;
    m = m > solve ? m : solve;
    return m + 8.0 * (double)((E >> LREL_BSHIFT) + 2) + (double)S * 16;
}

/* ---- the store ------------------------------------------------------------------ */

enum sow_status lrel_new(struct lrel *r, uint64_t E, int pits, int threads, const char *dir,
                         struct sow_error *e)
{
    memset(r, 0, sizeof *r);
    r->lfd = -1;
    r->E = E;
    r->pits = pits;
    r->threads = threads < 1 ? 1 : threads;
    r->sbshift = choose_sbshift(E, pits, r->threads);
    r->S = E ? (E + ((uint64_t)1 << r->sbshift) - 1) >> r->sbshift : 1;
    r->nblocks = (E + ((uint64_t)1 << LREL_BSHIFT) - 1) >> LREL_BSHIFT;
    snprintf(r->dir, sizeof r->dir, "%s", tmp_dir(dir));
    r->pfd = malloc(r->S * sizeof *r->pfd);
    r->psize = calloc(r->S, sizeof *r->psize);
    r->boff = calloc(r->nblocks + 1, sizeof *r->boff);
    r->buf = malloc((uint64_t)r->threads * r->S * sizeof *r->buf);
    if (!r->pfd || !r->psize || !r->boff || !r->buf) {
        lrel_free(r);
        return sow_fail(e, SOW_E_NOMEM, "out of memory (relay edge buffers)");
    }
    for (uint64_t i = 0; i < (uint64_t)r->threads * r->S; i++)
        r->buf[i].n = 0;
    for (uint64_t s = 0; s < r->S; s++)
        r->pfd[s] = -1;
    for (uint64_t s = 0; s < r->S; s++)
        if ((r->pfd[s] = tmp_fd(r->dir)) < 0)
            break;
    if (r->S && r->pfd[r->S - 1] >= 0)
        r->lfd = tmp_fd(r->dir);
    if (r->lfd < 0) {
        int err = errno;
        lrel_free(r);
        return sow_fail(e, SOW_E_IO, "cannot make the relay edge files in %s: %s",
                        tmp_dir(dir), strerror(err));
    }
    return SOW_OK;
}

void lrel_spill(struct lrel *r, uint64_t s, struct lrel_buf *b)
{
    uint64_t len = b->n * sizeof b->pair[0];
    uint64_t off = __atomic_fetch_add(&r->psize[s], len, __ATOMIC_RELAXED);
    if (!full_pwrite(r->pfd[s], b->pair, len, off))
        note_err(r, errno);
    b->n = 0;
}

void lrel_flush(struct lrel *r, int w)
{
    for (uint64_t s = 0; s < r->S; s++) {
        struct lrel_buf *b = &r->buf[(uint64_t)w * r->S + s];
        if (b->n)
            lrel_spill(r, s, b);
    }
}

/* Sort superbucket s (entries [a, a + len)) into the list file at byte
 * base; cnt, preds and chunk are the thread's buffers (grown here). */
static bool sort_one(struct lrel *r, uint64_t s, uint64_t base, uint32_t **cnt, uint64_t *ccap,
                     uint32_t **preds, uint64_t *pcap, uint64_t *chunk, uint32_t *offb,
                     uint64_t *maxblock, double *mem)
{
    uint64_t a = s << r->sbshift, len = (uint64_t)1 << r->sbshift;
    if (a + len > r->E)
        len = r->E - a;
    uint64_t m = r->psize[s] / 8;
    if (len > *ccap) {
        free(*cnt);
        *cnt = malloc(len * sizeof **cnt);
        *ccap = *cnt ? len : 0;
    }
    if (m > *pcap) {
        free(*preds);
        *preds = malloc(m * sizeof **preds);
        *pcap = *preds ? m : 0;
    }
    if ((len && !*cnt) || (m && !*preds)) {
        note_err(r, ENOMEM);
        return false;
    }
    double used = (double)(*ccap + *pcap) * 4 + 8.0 * LREL_CHUNK;
    if (used > *mem)
        *mem = used;
    uint32_t *c = *cnt, *pr = *preds;
    if (len)
        memset(c, 0, len * sizeof *c);
    /* counts, exclusive prefix, fill: c[i] ends as the end of i's list */
    for (uint64_t i = 0; i < m; i += LREL_CHUNK) {
        uint64_t k = m - i < LREL_CHUNK ? m - i : LREL_CHUNK;
        if (!full_pread(r->pfd[s], chunk, 8 * k, 8 * i)) {
            note_err(r, errno);
            return false;
        }
        for (uint64_t j = 0; j < k; j++)
            c[chunk[j] >> 32]++;
    }
    uint32_t sum = 0;
    for (uint64_t i = 0; i < len; i++) {
        uint32_t x = c[i];
        c[i] = sum;
        sum += x;
    }
    for (uint64_t i = 0; i < m; i += LREL_CHUNK) {
        uint64_t k = m - i < LREL_CHUNK ? m - i : LREL_CHUNK;
        if (!full_pread(r->pfd[s], chunk, 8 * k, 8 * i)) {
            note_err(r, errno);
            return false;
        }
        for (uint64_t j = 0; j < k; j++)
            pr[c[chunk[j] >> 32]++] = (uint32_t)chunk[j];
    }
    /* blocks: offsets relative to the block's first predecessor */
    uint64_t bl = (uint64_t)1 << LREL_BSHIFT;
    for (uint64_t ja = 0; ja < len; ja += bl) {
        uint64_t jl = len - ja < bl ? len - ja : bl;
        uint32_t st = ja ? c[ja - 1] : 0;
        offb[0] = 0;
        for (uint64_t i = 0; i < jl; i++)
            offb[i + 1] = c[ja + i] - st;
        uint64_t b = (a + ja) >> LREL_BSHIFT, np = offb[jl];
        r->boff[b] = base;
        if (!full_pwrite(r->lfd, offb, 4 * (jl + 1), base) ||
            (np && !full_pwrite(r->lfd, pr + st, 4 * np, base + 4 * (jl + 1)))) {
            note_err(r, errno);
            return false;
        }
        uint64_t bytes = 4 * (jl + 1 + np);
        if (bytes > *maxblock)
            *maxblock = bytes;
        base += bytes;
    }
    return true;
}

enum sow_status lrel_sort(struct lrel *r, int threads, struct tb_progress *pr,
                          const struct tb_build_opts *opt, struct sow_error *e)
{
    free(r->buf);
    r->buf = NULL;
    if (r->err)
        return sow_fail(e, SOW_E_IO, "writing the relay edges in %s: %s", r->dir,
                        strerror(r->err));
    uint64_t *base = malloc(r->S * sizeof *base);
    if (!base)
        return sow_fail(e, SOW_E_NOMEM, "out of memory (relay edges)");
    uint64_t tot = 0;
    r->edges = 0;
    for (uint64_t s = 0; s < r->S; s++) {
        uint64_t a = s << r->sbshift, len = (uint64_t)1 << r->sbshift;
        if (a + len > r->E)
            len = r->E - a;
        uint64_t m = r->psize[s] / 8;
        if (m >= ((uint64_t)1 << 32)) {
            free(base);
            return sow_fail(e, SOW_E_TOO_BIG, "2^32 or more in-level moves into %llu entries",
                            (unsigned long long)len);
        }
        uint64_t blocks = (len + ((uint64_t)1 << LREL_BSHIFT) - 1) >> LREL_BSHIFT;
        base[s] = tot;
        tot += 4 * (len + blocks + m);
        r->edges += m;
    }
    r->boff[r->nblocks] = tot;
    /* The lists are written before the pair files are given back (one
     * superbucket at a time): refuse now rather than fail halfway. */
    struct statvfs fs;
    if (fstatvfs(r->lfd, &fs) == 0 && (double)fs.f_bavail * (double)fs.f_frsize < (double)tot) {
        free(base);
        return sow_fail(e, SOW_E_TOO_BIG,
                        "the relay edge lists need %.2f GB more in %s, %.2f GB are free",
                        (double)tot / 1e9, r->dir, (double)fs.f_bavail * (double)fs.f_frsize / 1e9);
    }
    uint64_t maxblock = 0;
    double mem = 0;
    int T = sort_threads(threads);
#pragma omp parallel num_threads(T) reduction(max : maxblock) reduction(+ : mem)
    {
        uint32_t *cnt = NULL, *preds = NULL;
        uint64_t ccap = 0, pcap = 0, mb = 0;
        double tm = 0;
        uint64_t *chunk = malloc(8 * LREL_CHUNK);
        uint32_t *offb = malloc(4 * (((uint64_t)1 << LREL_BSHIFT) + 1));
        if (!chunk || !offb)
            note_err(r, ENOMEM);
#pragma omp for schedule(dynamic, 1)
        for (uint64_t s = 0; s < r->S; s++) {
            if (r->err || tb_stopped(opt))
                continue;
            if (sort_one(r, s, base[s], &cnt, &ccap, &preds, &pcap, chunk, offb, &mb, &tm)) {
                close(r->pfd[s]); /* its disk space back */
                r->pfd[s] = -1;
            }
            uint64_t len = (uint64_t)1 << r->sbshift;
            if (pr)
                tb_progress_add(pr, s + 1 == r->S ? r->E - (s << r->sbshift) : len);
        }
        free(cnt);
        free(preds);
        free(chunk);
        free(offb);
        maxblock = mb;
        mem = tm;
    }
    free(base);
    r->maxblock = maxblock;
    r->sortbytes = mem;
    if (r->err)
        return sow_fail(e, r->err == ENOMEM ? SOW_E_NOMEM : SOW_E_IO,
                        "sorting the relay edges in %s: %s", r->dir, strerror(r->err));
    if (tb_stopped(opt))
        return sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
    return SOW_OK;
}

bool lrel_read(struct lrel *r, uint64_t b, uint32_t **buf, uint64_t *cap, const uint32_t **off,
               const uint32_t **p)
{
    uint64_t bytes = r->boff[b + 1] - r->boff[b];
    if (bytes > *cap) {
        uint64_t want = bytes > r->maxblock ? bytes : r->maxblock;
        uint32_t *nb = realloc(*buf, want);
        if (!nb) {
            note_err(r, ENOMEM);
            return false;
        }
        *buf = nb;
        *cap = want;
    }
    if (!full_pread(r->lfd, *buf, bytes, r->boff[b])) {
        note_err(r, errno);
        return false;
    }
    uint64_t len = r->E - (b << LREL_BSHIFT);
    if (len > ((uint64_t)1 << LREL_BSHIFT))
        len = (uint64_t)1 << LREL_BSHIFT;
    *off = *buf;
    *p = *buf + len + 1;
    return true;
}

bool lrel_read_list(struct lrel *r, uint64_t b, uint64_t i, uint32_t **buf, uint64_t *cap,
                    const uint32_t **list, uint32_t *k)
{
    uint32_t o[2];
    if (!full_pread(r->lfd, o, sizeof o, r->boff[b] + 4 * i)) {
        note_err(r, errno);
        return false;
    }
    uint64_t len = r->E - (b << LREL_BSHIFT);
    if (len > ((uint64_t)1 << LREL_BSHIFT))
        len = (uint64_t)1 << LREL_BSHIFT;
    uint64_t bytes = 4 * (uint64_t)(o[1] - o[0]);
    if (o[1] < o[0] || r->boff[b] + 4 * (len + 1) + 4 * (uint64_t)o[1] > r->boff[b + 1]) {
        note_err(r, EIO); /* not what lrel_sort wrote */
        return false;
    }
    if (bytes > *cap) {
        uint64_t want = bytes > r->maxblock ? bytes : r->maxblock;
        uint32_t *nb = realloc(*buf, want);
        if (!nb) {
            note_err(r, ENOMEM);
            return false;
        }
        *buf = nb;
        *cap = want;
    }
    if (bytes && !full_pread(r->lfd, *buf, bytes, r->boff[b] + 4 * (len + 1) + 4 * (uint64_t)o[0])) {
        note_err(r, errno);
        return false;
    }
    *list = *buf;
    *k = o[1] - o[0];
    return true;
}

void lrel_free(struct lrel *r)
{
    if (r->pfd)
        for (uint64_t s = 0; s < r->S; s++)
            if (r->pfd[s] >= 0)
                close(r->pfd[s]);
    if (r->lfd >= 0)
        close(r->lfd);
    free(r->pfd);
    free(r->psize);
    free(r->boff);
    free(r->buf);
    memset(r, 0, sizeof *r);
    r->lfd = -1;
}
