/* json_alloc.c - cJSON allocation hook that counts failures (json_alloc.h says why). */
#include "json_alloc.h"

#include <stdatomic.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

static atomic_ulong failures;

static void *counting_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        atomic_fetch_add(&failures, 1);
    return p;
}

void mieb_json_alloc_hooks(void)
{
    cJSON_Hooks h = {.malloc_fn = counting_malloc, .free_fn = free};
    cJSON_InitHooks(&h);
}

unsigned long mieb_json_alloc_failures(void) { return atomic_load(&failures); }
