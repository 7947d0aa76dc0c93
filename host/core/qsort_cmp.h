/**
 * qsort_cmp.h - the qsort comparators several layers need, one copy each.
 */
#ifndef MIEB_CORE_QSORT_CMP_H
#define MIEB_CORE_QSORT_CMP_H

/** Ascending int64_t. */
int mieb_cmp_i64(const void *a, const void *b);

/** Ascending by strcmp, for an array of C string pointers. */
int mieb_cmp_str_ptr(const void *a, const void *b);

#endif
