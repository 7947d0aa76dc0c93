/**
 * thrust_shim.cu - C-callable Thrust wrappers (see thrust_shim.h).
 *
 * Segmented sort, the Thrust way: one stable radix sort of all keys (descending) that
 * carries each key's segment number, then one stable radix sort by segment number.
 * Stability of the second sort keeps the descending key order inside each segment.
 * Two passes of radix sort beat a comparison sort with a (segment, key) comparator.
 */
#include "thrust_shim.h"

#include <new>
#include <stdexcept>

#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sort.h>
#include <thrust/system/cuda/error.h>
#include <thrust/system/system_error.h>
#include <thrust/transform.h>

#include "cuda_check.h"

namespace {

/* Hands out the caller's scratch view first, by bump pointer; falls back to cudaMalloc.
 * Thrust keeps a reference to it (par_nosync(alloc)), so the state below is shared. */
struct scratch_allocator {
    typedef char value_type;
    char *base;
    size_t cap, used;

    char *allocate(std::ptrdiff_t n)
    {
        size_t need = mieb_cuda_aligned((size_t)n);
        if (base && used + need <= cap) {
            char *p = base + used;
            used += need;
            return p;
        }
        void *p = NULL;
        const cudaError_t e = cudaMalloc(&p, (size_t)n);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            /* an earlier kernel's fault surfacing here is a CUDA error, not a want of memory:
             * reported as such, it marks the context broken instead of inviting a retry */
            if (e != cudaErrorMemoryAllocation)
                throw thrust::system_error(e, thrust::cuda_category(), "sort scratch allocation");
            MIEB_LOGW("cuda: sort scratch of %.1f MiB beyond the planned %.1f MiB could not be allocated",
                      (double)n / 1048576.0, (double)cap / 1048576.0);
            throw std::bad_alloc();
        }
        return (char *)p;
    }

    void deallocate(char *p, size_t n)
    {
        if (base && p >= base && p < base + cap) {
            /* Thrust frees in reverse order of allocation: pop the top view. */
            if (p + mieb_cuda_aligned(n) == base + used)
                used -= mieb_cuda_aligned(n);
            return;
        }
        if (cudaFree(p) != cudaSuccess)
            (void)cudaGetLastError();
    }
};

struct segment_of {
    int64_t seg_len;
    __host__ __device__ uint32_t operator()(int64_t i) const { return (uint32_t)(i / seg_len); }
};

} // namespace

extern "C" size_t mieb_cuda_segsort_scratch_bytes(int64_t n_seg, int64_t seg_len)
{
    if (n_seg <= 0 || seg_len <= 1)
        return 0; /* nothing to sort */
    size_t n = (size_t)n_seg * (size_t)seg_len;
    /* segment ids (4 B) + the radix double buffers of one sort (8 + 4 B) + CUB's
     * decoupled look-back state (about 1/4 B per key) + its histograms and alignment */
    return mieb_cuda_aligned(n * 4) + n * 13 + n / 2 + ((size_t)256 << 10);
}

extern "C" mieb_status mieb_cuda_segsort_u64_desc(struct mieb_cuda_ctx *ctx, uint64_t *keys, int64_t n_seg,
                                                  int64_t seg_len, void *scratch, size_t scratch_bytes)
{
    MIEB_CUDA_REQUIRE(ctx && ctx->magic == MIEB_CUDA_CTX_MAGIC);
    MIEB_CUDA_REQUIRE(n_seg >= 0 && seg_len >= 0);
    int64_t n = n_seg * seg_len;
    if (n <= 1 || seg_len <= 1)
        return MIEB_OK;
    MIEB_CUDA_REQUIRE(keys != NULL);
    MIEB_CUDA_REQUIRE(n_seg <= (int64_t)UINT32_MAX);

    scratch_allocator alloc = {(char *)scratch, scratch ? scratch_bytes : 0, 0};
    uint32_t *seg = NULL;
    try {
        auto policy = thrust::cuda::par_nosync(alloc).on(ctx->stream);
        if (n_seg == 1) {
            thrust::sort(policy, keys, keys + n, thrust::greater<uint64_t>());
        } else {
            seg = (uint32_t *)alloc.allocate((std::ptrdiff_t)(sizeof(uint32_t) * (size_t)n));
            thrust::transform(policy, thrust::counting_iterator<int64_t>(0), thrust::counting_iterator<int64_t>(n),
                              seg, segment_of{seg_len});
            thrust::stable_sort_by_key(policy, keys, keys + n, seg, thrust::greater<uint64_t>());
            thrust::stable_sort_by_key(policy, seg, seg + n, keys);
            alloc.deallocate((char *)seg, sizeof(uint32_t) * (size_t)n);
            seg = NULL;
        }
    } catch (const std::bad_alloc &) {
        if (seg)
            alloc.deallocate((char *)seg, sizeof(uint32_t) * (size_t)n);
        return mieb_fail(MIEB_ERR_OOM, "cuda: no memory to sort %lld keys in %lld segments", (long long)n,
                         (long long)n_seg);
    } catch (const thrust::system_error &e) {
        if (seg)
            alloc.deallocate((char *)seg, sizeof(uint32_t) * (size_t)n);
        return mieb_cuda_record_error(MIEB_ERR_CUDA, "thrust sort", e.code().value(), e.what(), __func__, __FILE__,
                                      __LINE__);
    } catch (const std::exception &e) {
        return mieb_fail(MIEB_ERR_INTERNAL, "cuda: segmented sort: %s", e.what());
    } catch (...) {
        return mieb_fail(MIEB_ERR_INTERNAL, "cuda: segmented sort: unknown exception");
    }
    if (ctx->sync_check)
        MIEB_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    return MIEB_OK;
}
