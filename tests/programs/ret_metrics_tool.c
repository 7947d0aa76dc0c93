/*
 * ret_metrics_tool.c - drive the retrieval metric reduction from
 * tests/py/test_retrieval_metrics.py.
 *
 * stdin: one case {"queries": [{"scores": [...], "doc_ids": [...], "rel": [...],
 * "qrels_values": [...]}, ...]} (scores in results-dict order) or a JSON array of cases.
 * stdout: the score object of each case (an array of them for an array input), every
 * number printed as Python's json.dumps prints a float (NaN as NaN, which Python's json
 * reads back). A score may be a string for strtof ("nan"). On a library failure the case's output is {"error": "<message>"}.
 * With "--round N" every number is first rounded as mteb's to_disk rounds it
 * (mieb_ret_round_for_write), to check the write-time rounding on real metric values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/pyfloat.h"
#include "core/status.h"
#include "metrics/retrieval_metrics.h"

static char *read_all(FILE *f)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
        if (len + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* Parse one query into flat arrays owned by the caller's cleanup (freed after add). */
static mieb_status add_query(struct mieb_ret_eval *ev, const cJSON *jq)
{
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(jq, "scores");
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(jq, "doc_ids");
    const cJSON *jr = cJSON_GetObjectItemCaseSensitive(jq, "rel");
    const cJSON *jv = cJSON_GetObjectItemCaseSensitive(jq, "qrels_values");
    if (!cJSON_IsArray(js) || !cJSON_IsArray(jd) || !cJSON_IsArray(jr) || !cJSON_IsArray(jv))
        return mieb_fail(MIEB_ERR_INVALID_ARG, "query lacks scores/doc_ids/rel/qrels_values");
    int n = cJSON_GetArraySize(js), nq = cJSON_GetArraySize(jv);
    if (cJSON_GetArraySize(jd) != n || cJSON_GetArraySize(jr) != n)
        return mieb_fail(MIEB_ERR_INVALID_ARG, "array lengths differ");
    float *scores = malloc(sizeof(float) * (size_t)(n + 1));
    const char **ids = malloc(sizeof(char *) * (size_t)(n + 1));
    int32_t *rel = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int32_t *qv = malloc(sizeof(int32_t) * (size_t)(nq + 1));
    mieb_status st = MIEB_OK;
    if (!scores || !ids || !rel || !qv) {
        st = mieb_fail(MIEB_ERR_OOM, "tool: out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        /* Python writes the exact fp32 value as a double; the cast back is exact. A score
         * given as a string ("nan") goes through strtod, JSON having no NaN literal. */
        const cJSON *sv = cJSON_GetArrayItem(js, i);
        scores[i] = cJSON_IsString(sv) ? strtof(sv->valuestring, NULL) : (float)sv->valuedouble;
        ids[i] = cJSON_GetStringValue(cJSON_GetArrayItem(jd, i));
        rel[i] = (int32_t)cJSON_GetArrayItem(jr, i)->valuedouble;
        if (ids[i] == NULL) {
            st = mieb_fail(MIEB_ERR_INVALID_ARG, "doc id is not a string");
            goto out;
        }
    }
    for (int j = 0; j < nq; j++)
        qv[j] = (int32_t)cJSON_GetArrayItem(jv, j)->valuedouble;
    struct mieb_ret_query_result q = {
        .n = n, .scores = scores, .doc_ids = ids, .rel = rel, .n_qrels = nq, .qrels_values = qv};
    st = mieb_ret_eval_add(ev, &q);
out:
    free(scores);
    free(ids);
    free(rel);
    free(qv);
    return st;
}

static void print_json_string(const char *s)
{
    cJSON *item = cJSON_CreateStringReference(s);
    char *p = item ? cJSON_PrintUnformatted(item) : NULL;
    fputs(p ? p : "\"?\"", stdout);
    free(p);
    cJSON_Delete(item);
}

static int round_digits = -1000; /* --round N; -1000 = print unrounded */

static void run_case(const cJSON *jc)
{
    struct mieb_ret_eval *ev = NULL;
    cJSON *scores = cJSON_CreateObject();
    mieb_status st = mieb_ret_eval_new(&ev);
    const cJSON *jqs = cJSON_GetObjectItemCaseSensitive(jc, "queries");
    if (st == MIEB_OK && !cJSON_IsArray(jqs))
        st = mieb_fail(MIEB_ERR_INVALID_ARG, "case lacks \"queries\"");
    const cJSON *jq;
    if (st == MIEB_OK) {
        cJSON_ArrayForEach(jq, jqs)
        {
            st = add_query(ev, jq);
            if (st != MIEB_OK)
                break;
        }
    }
    if (st == MIEB_OK)
        st = mieb_ret_eval_finish(ev, scores);
    if (st != MIEB_OK) {
        fputs("{\"error\": ", stdout);
        print_json_string(mieb_last_error());
        fputs("}", stdout);
    } else {
        fputs("{", stdout);
        const cJSON *it;
        int first = 1;
        cJSON_ArrayForEach(it, scores)
        {
            char num[32];
            double v = it->valuedouble;
            if (round_digits != -1000)
                v = mieb_ret_round_for_write(it->string, v, round_digits);
            mieb_py_repr(v, num, sizeof num);
            if (!first)
                fputs(", ", stdout);
            first = 0;
            print_json_string(it->string);
            printf(": %s", num);
        }
        fputs("}", stdout);
    }
    cJSON_Delete(scores);
    mieb_ret_eval_free(ev);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--round") == 0) {
        round_digits = atoi(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: ret_metrics_tool [--round N] < cases.json\n");
        return 2;
    }
    char *text = read_all(stdin);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (root == NULL) {
        fprintf(stderr, "ret_metrics_tool: cannot parse the JSON input\n");
        return 2;
    }
    if (cJSON_IsArray(root)) {
        const cJSON *jc;
        int first = 1;
        fputs("[", stdout);
        cJSON_ArrayForEach(jc, root)
        {
            if (!first)
                fputs(",\n", stdout);
            first = 0;
            run_case(jc);
        }
        fputs("]\n", stdout);
    } else {
        run_case(root);
        fputs("\n", stdout);
    }
    cJSON_Delete(root);
    return 0;
}
