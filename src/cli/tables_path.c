/* Tables paths: one or more directories separated by ':' (tables_path.h). */
#include "cli.h"
#include "tables_path.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *tpath_default(void)
{
    return tb_default_dir();
}

int tpath_check(const char *path, char *msg, size_t len)
{
    if (!*path) {
        snprintf(msg, len, "no directory given");
        return -1;
    }
    for (const char *d = path;;) {
        size_t l = strcspn(d, ":");
        if (!l) {
            snprintf(msg, len, "'%s': an empty directory name", path);
            return -1;
        }
        char dir[4096];
        if (l >= sizeof dir) {
            snprintf(msg, len, "a directory name longer than %zu bytes", sizeof dir - 1);
            return -1;
        }
        snprintf(dir, sizeof dir, "%.*s", (int)l, d);
        struct stat st;
        if (stat(dir, &st) != 0) {
            int err = errno;
            snprintf(msg, len, "%s: %s", dir,
                     err == ENOENT ? "no such directory" : strerror(err));
            return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
            snprintf(msg, len, "%s: not a directory", dir);
            return -1;
        }
        if (!d[l])
            return 0;
        d += l + 1;
    }
}

const char *tpath_default_usable(char *note, size_t len)
{
    const char *d = tpath_default();
    char msg[600];
    if (note && len)
        *note = 0;
    if (tpath_check(d, msg, sizeof msg) == 0)
        return d;
    const char *env = getenv("SOW_TABLES");
    if (note && len && env && *env)
        snprintf(note, len, "note: $SOW_TABLES: %s; no tables used", msg);
    return NULL;
}

enum sow_status tpath_open(const struct ruleset *rs, const char *path, long cache_mb,
                           struct tb_set **out, struct sow_error *e)
{
    /* a cache sized as the transposition tables are: refused up front */
    double ram, room = cli_table_room(&ram);
    *out = NULL;
    if (cache_mb > 0 && room > 0 && (double)cache_mb > room)
        return sow_fail(e, SOW_E_TOO_BIG,
                        "a block cache of %ld MiB does not fit: this machine has %.0f MiB, at "
                        "most %.0f MiB (3/4 of it) can go to it",
                        cache_mb, ram, room);
    enum sow_status st = tb_open(rs, path, out, e);
    if (st != SOW_OK || cache_mb <= 0)
        return st;
    st = tb_set_cache(*out, (uint64_t)cache_mb << 20, e);
    if (st != SOW_OK) {
        tb_close(*out);
        *out = NULL;
    }
    return st;
}

enum sow_status tpath_solution_find(const struct ruleset *rs, const char *path,
                                    const sow_position *p, struct sol **out, char *found,
                                    size_t len, struct sow_error *e)
{
    *out = NULL;
    if (len)
        found[0] = 0;
    for (const char *d = path; *d;) {
        char dir[4096];
        if (!util_path_next(&d, dir, sizeof dir))
            continue;
        enum sow_status st = search_solution_find(rs, dir, p, out, found, len, e);
        if (st != SOW_OK || *out)
            return st;
    }
    return SOW_OK;
}
