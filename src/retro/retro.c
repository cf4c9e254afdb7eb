/* The retrograde game's shared parts (retro.h): thread counts and regions. */
#include <omp.h>
#include <sys/mman.h>

#include "retro.h"

int retro_threads(int asked, uint64_t E, int max)
{
    int T = asked > 0 ? asked : omp_get_max_threads();
    if (E < 200000 && asked <= 0)
        T = 1;
    if (T > max)
        T = max;
    return T < 1 ? 1 : T;
}

#define HUGE_2M ((size_t)2 << 20)

void *retro_region_get(struct retro_region *r, size_t need, int flags)
{
    if (need <= r->len)
        return r->p;
    /* A region that has to grow is being reused by levels of increasing
     * size (one level at a time, the largest unknown): with RETRO_SPARE,
     * reserve 4 times what is needed, so that the next levels fit and reuse
     * the pages already touched instead of having fresh ones zeroed again
     * (untouched pages cost only address space; the exact size if that
     * much is refused). */
    size_t want = (flags & RETRO_SPARE) && r->map && need < SIZE_MAX / 8 ? 4 * need : need;
    if (r->map)
        munmap(r->map, r->maplen);
    r->map = r->p = NULL;
    r->maplen = r->len = 0;
    void *m = MAP_FAILED;
    size_t len = 0, maplen = 0;
    for (;;) {
        len = (want + HUGE_2M - 1) & ~(HUGE_2M - 1);
        maplen = len + HUGE_2M;
        m = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED || want == need)
            break;
        want = need;
    }
    if (m == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)m + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));
    if (flags & RETRO_HUGE)
        madvise(p, len, MADV_HUGEPAGE);
    r->map = m;
    r->maplen = maplen;
    r->p = p;
    r->len = len;
    return p;
}

void retro_region_free(struct retro_region *r)
{
    if (r->map)
        munmap(r->map, r->maplen);
    r->map = r->p = NULL;
    r->maplen = r->len = 0;
}
