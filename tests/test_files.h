/* Included by the test files that compare whole files (a build against
 * another, a solution file against one written another way). */
#ifndef SOW_TEST_FILES_H
#define SOW_TEST_FILES_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Both files readable and the same bytes. */
static inline bool test_same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    char x[1 << 14], y[1 << 14];
    while (same) {
        size_t nx = fread(x, 1, sizeof x, fa), ny = fread(y, 1, sizeof y, fb);
        same = nx == ny && memcmp(x, y, nx) == 0;
        if (nx < sizeof x)
            break;
    }
    same = same && fa && fgetc(fa) == EOF && fgetc(fb) == EOF;
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

#endif
