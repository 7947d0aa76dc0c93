/* test_task_shards.c - cost-balanced task shards (plan/task_shards.h): equal costs give j % K,
 * every task goes to exactly one shard, the largest shard stays within LPT's proven bounds
 * (sum / K + the costliest task; 4/3 - 1/(3K) of the optimum, found here by brute force),
 * and on MIEB(lite) the split is far more even than round robin. */
#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "config/registry.h"
#include "plan/task_shards.h"

static double makespan(const struct mieb_registry *reg, const struct mieb_task *const *t, int n, int k,
                       const int *shard)
{
    double load[64] = {0}, worst = 0;
    for (int j = 0; j < n; j++)
        load[shard[j]] += mieb_task_cost(reg, t[j]);
    for (int s = 0; s < k; s++)
        worst = fmax(worst, load[s]);
    return worst;
}

/* The best makespan over every assignment of n tasks to k shards (n <= 10). */
static double optimum(const double *cost, int n, int k)
{
    int a[16] = {0};
    double best = INFINITY;
    for (;;) {
        double load[8] = {0}, worst = 0;
        for (int j = 0; j < n; j++)
            load[a[j]] += cost[j];
        for (int s = 0; s < k; s++)
            worst = fmax(worst, load[s]);
        best = fmin(best, worst);
        int j = 0;
        while (j < n && ++a[j] == k)
            a[j++] = 0;
        if (j == n)
            return best;
    }
}

static void equal_costs_are_round_robin(void)
{
    struct mieb_task tasks[40];
    const struct mieb_task *p[40];
    int shard[40];
    for (int j = 0; j < 40; j++) {
        tasks[j] = (struct mieb_task){.name = "t", .family = MIEB_FAMILY_STS};
        p[j] = &tasks[j];
    }
    for (int n = 0; n <= 40; n++)
        for (int k = 1; k <= 7; k++) {
            CHECK(mieb_shard_assign(NULL, p, n, k, shard) == MIEB_OK);
            for (int j = 0; j < n; j++)
                CHECK_MSG(shard[j] == j % k, "n %d k %d: task %d -> %d", n, k, j, shard[j]);
        }
    CHECK(mieb_shard_assign(NULL, p, 3, 0, shard) != MIEB_OK);
}

static void random_costs_within_lpt_bounds(void)
{
    unsigned long long rng = 11;
    for (int rep = 0; rep < 300; rep++) {
        int n = 1 + (int)(check_rng_u64(&rng) % 10), k = 1 + (int)(check_rng_u64(&rng) % 3);
        struct mieb_task tasks[10];
        const struct mieb_task *p[10];
        cJSON *json[10];
        double cost[10], sum = 0, max = 0;
        int shard[10];
        for (int j = 0; j < n; j++) {
            json[j] = cJSON_CreateObject();
            /* retrieval tasks of random sizes, some of them equal (ties) */
            double q = (double)(1 + check_rng_u64(&rng) % 4) * 100, d = (double)(1 + check_rng_u64(&rng) % 50) * 1000;
            cJSON_AddNumberToObject(json[j], "n_queries", q);
            cJSON_AddNumberToObject(json[j], "n_corpus", d);
            tasks[j] = (struct mieb_task){.name = "r", .family = MIEB_FAMILY_RETRIEVAL, .json = json[j]};
            p[j] = &tasks[j];
            cost[j] = mieb_task_cost(NULL, p[j]);
            sum += cost[j];
            max = fmax(max, cost[j]);
        }
        CHECK(mieb_shard_assign(NULL, p, n, k, shard) == MIEB_OK);
        int again[10];
        CHECK(mieb_shard_assign(NULL, p, n, k, again) == MIEB_OK && !memcmp(shard, again, (size_t)n * sizeof *shard));
        for (int j = 0; j < n; j++)
            CHECK(shard[j] >= 0 && shard[j] < k);
        double got = makespan(NULL, p, n, k, shard), opt = optimum(cost, n, k);
        CHECK_MSG(got <= sum / k + max, "rep %d: %g > %g", rep, got, sum / k + max);
        CHECK_MSG(got <= (4.0 / 3.0 - 1.0 / (3.0 * k)) * opt * (1 + 1e-12), "rep %d: %g against optimum %g", rep, got, opt);
        for (int j = 0; j < n; j++)
            cJSON_Delete(json[j]);
    }
}

static void mieb_lite_is_balanced(void)
{
    struct mieb_registry reg;
    CHECK(mieb_registry_load_default(&reg) == MIEB_OK);
    const struct mieb_benchmark *b = mieb_registry_benchmark(&reg, "MIEB(lite)");
    CHECK(b != NULL);
    if (!b) {
        mieb_registry_free(&reg);
        return;
    }
    int shard[256], rr[256];
    for (int k = 2; k <= 8; k++) {
        CHECK(mieb_shard_assign(&reg, b->tasks, b->n_tasks, k, shard) == MIEB_OK);
        double sum = 0, max = 0;
        for (int j = 0; j < b->n_tasks; j++) {
            double c = mieb_task_cost(&reg, b->tasks[j]);
            CHECK(c > 0 && isfinite(c));
            sum += c;
            max = fmax(max, c);
            rr[j] = j % k;
        }
        double got = makespan(&reg, b->tasks, b->n_tasks, k, shard), round = makespan(&reg, b->tasks, b->n_tasks, k, rr);
        CHECK_MSG(got <= sum / k + max, "k %d", k);
        CHECK_MSG(got <= round, "k %d: %g against round robin's %g", k, got, round);
        if (k == 4)
            CHECK_MSG(got < 0.9 * round, "k 4: %g against round robin's %g", got, round);
    }
    mieb_registry_free(&reg);
}

int main(void)
{
    equal_costs_are_round_robin();
    random_costs_within_lpt_bounds();
    mieb_lite_is_balanced();
    return check_done("test_task_shards");
}
