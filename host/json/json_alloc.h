/**
 * json_alloc.h - notice cJSON allocation failures.
 *
 * cJSON's builders (cJSON_AddNumberToObject, cJSON_CreateString, ...) return NULL when an
 * allocation fails, and callers here, like most cJSON code, do not check every one: a
 * result tree built under memory pressure can silently lack a key. So cJSON allocates
 * through a hook that counts failures, and the results writer refuses to write once any
 * has happened (MIEB_ERR_OOM): a missing key must never reach a results file. The JSON
 * readers use the count to say "out of memory" instead of "not valid JSON".
 */
#ifndef MIEB_JSON_JSON_ALLOC_H
#define MIEB_JSON_JSON_ALLOC_H

/** Route cJSON's allocations through the counting hook (main(), before any cJSON use). */
void mieb_json_alloc_hooks(void);
/** cJSON allocations that have failed in this process so far. */
unsigned long mieb_json_alloc_failures(void);

/** What a failed cJSON parse means, for messages: cJSON gives up on syntax errors and on
    nesting deeper than CJSON_NESTING_LIMIT (1000) levels alike. */
#define MIEB_JSON_PARSE_FAILED "not valid JSON (a syntax error, or nested more than 1000 levels deep)"

#endif
