#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

void util_huge(void *p, size_t len)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + len) & ~(huge - 1);
    if (p && b > a)
        madvise((void *)a, b - a, MADV_HUGEPAGE);
}

size_t util_path_next(const char **p, char *dir, size_t len)
{
    const char *d = *p;
    size_t l = strcspn(d, ":");
    snprintf(dir, len, "%.*s", (int)(l < len ? l : len - 1), d);
    *p = d + l + (d[l] == ':');
    return l;
}

const char *util_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

bool util_mkdtemp(char *buf, size_t len, const char *prefix)
{
    if ((size_t)snprintf(buf, len, "%s/%s-XXXXXX", util_tmpdir(), prefix) >= len) {
        errno = ENAMETOOLONG;
        return false;
    }
    return mkdtemp(buf) != NULL;
}

void util_rmdir_flat(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4200];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) { /* .sowtb.lock too */
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

struct util_gb2 util_gb2(double need, double budget)
{
    struct util_gb2 g;
    for (int p = 3; p <= 9; p++) {
        snprintf(g.need, sizeof g.need, "%.*g", p, need / 1e9);
        snprintf(g.budget, sizeof g.budget, "%.*g", p, budget / 1e9);
        if (need <= budget || strtod(g.need, NULL) > strtod(g.budget, NULL))
            break;
    }
    return g;
}

double util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double util_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int util_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi || end == s)
        return -1;
    *out = v;
    return 0;
}

long util_env_long(const char *name, long lo, long hi, long dflt)
{
    long v;
    return util_parse_long(getenv(name), lo, hi, &v) == 0 ? v : dflt;
}

void util_drop_pages(const void *p, size_t n)
{
    uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
    uintptr_t b = ((uintptr_t)p + n) & ~(uintptr_t)4095;
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

double util_phys_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}
