/*
 * qsort_cmp.c - shared qsort comparators (qsort_cmp.h).
 */
#include "qsort_cmp.h"

#include <stdint.h>
#include <string.h>

int mieb_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);  /* no subtraction: it would overflow for far-apart values */
}

int mieb_cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}
