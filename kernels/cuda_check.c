/* cuda_check.c - the error record behind the check macros of cuda_check.h. */
#include "cuda_check.h"

mieb_status mieb_cuda_record_error(mieb_status st, const char *stmt, int code, const char *what,
                                   const char *func, const char *file, int line)
{
    int dev = -1;
    /* Clear a non-sticky error so that the next unrelated check does not see it again;
     * a sticky one (illegal address ...) stays, and the context is marked broken. */
    (void)cudaGetLastError();
    if (cudaGetDevice(&dev) != cudaSuccess) {
        dev = -1;
        (void)cudaGetLastError();
    }
    return mieb_fail(st, "%s failed: %s (%s %d) in %s at %s:%d on device %d", stmt, what ? what : "?",
                     st == MIEB_ERR_CUBLAS ? "cublasStatus" : "cudaError", code, func, file, line, dev);
}
