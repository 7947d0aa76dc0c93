/*
 * test_retrieval_round.c - the write-time rounding of retrieval values follows the Python
 * type mteb holds them in: numpy.float64 for nAUC (numpy rounds x * 10^6), Python float
 * for the rest (correctly rounded). 0.8008755 sits just below the tie in binary, so the
 * two disagree on it; the Python-side values were checked with CPython and numpy 2.4.
 */
#include <math.h>

#include "check.h"
#include "core/pyfloat.h"
#include "emulation/npmath.h"
#include "metrics/retrieval_metrics.h"

int main(void)
{
    /* round(0.8008755, 6) == 0.800875; round(np.float64(0.8008755), 6) == 0.800876 */
    CHECK(mieb_py_round(0.8008755, 6) == 0.800875);
    CHECK(mieb_np_round(0.8008755, 6) == 0.800876);
    CHECK(mieb_ret_round_for_write("ndcg_at_10", 0.8008755, 6) == 0.800875);
    CHECK(mieb_ret_round_for_write("mrr_at_10", 0.8008755, 6) == 0.800875);
    CHECK(mieb_ret_round_for_write("nauc_ndcg_at_10_max", 0.8008755, 6) == 0.800876);
    CHECK(mieb_ret_round_for_write("nauc_mrr_at_1_diff1", 0.1236465, 6) == 0.123646);
    CHECK(mieb_ret_round_for_write("hit_rate_at_1", 0.1236465, 6) == 0.123647);
    CHECK(isnan(mieb_ret_round_for_write("nauc_map_at_5_std", NAN, 6)));
    /* the k values and their order are part of the key names */
    CHECK(mieb_ret_k_values[0] == 1 && mieb_ret_k_values[MIEB_RET_NK - 1] == 1000);
    return check_done("test_retrieval_round");
}
