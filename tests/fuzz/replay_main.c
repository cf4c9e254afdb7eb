/* Replay driver: runs a fuzz target's LLVMFuzzerTestOneInput over files and
 * directories given on the command line, without libFuzzer.  This is how the
 * seed corpora and every past finding (tests/fuzz/corpus/<target>/) are run by
 * `meson test` in every build, sanitized or not, with any compiler.  An
 * invariant break aborts (non-zero status); prints "replayed N inputs". */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf)
        return -1;
    /* An exact-size copy, so ASan sees reads past the input's end. */
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    long count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]) < 0)
                return 1;
            count++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d)
            return 1;
        char **names = NULL;
        size_t nn = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            names = realloc(names, (nn + 1) * sizeof *names);
            size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
            names[nn] = malloc(len);
            snprintf(names[nn++], len, "%s/%s", argv[i], e->d_name);
        }
        closedir(d);
        if (nn)
            qsort(names, nn, sizeof *names, cmp);
        for (size_t k = 0; k < nn; k++) {
            if (replay_file(names[k]) < 0)
                return 1;
            count++;
            free(names[k]);
        }
        free(names);
    }
    printf("replayed %ld inputs\n", count);
    return count ? 0 : 1;
}
