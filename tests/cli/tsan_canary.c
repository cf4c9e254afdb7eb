/* TSan canary (threads.sh): with argument "race", two OpenMP threads add to
 * one variable without synchronisation and TSan must report it; without, the
 * same sum is a reduction and TSan must stay silent.  Proves that the TSan +
 * libomp + Archer set-up sees real races and no runtime-internal ones. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    long s = 0;
    if (argc > 1 && strcmp(argv[1], "race") == 0) {
#pragma omp parallel for num_threads(2)
        for (int i = 0; i < 100000; i++)
            s += i;
    } else {
#pragma omp parallel for num_threads(2) reduction(+ : s)
        for (int i = 0; i < 100000; i++)
            s += i;
    }
    printf("%ld\n", s);
    return 0;
}
