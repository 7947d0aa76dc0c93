/**
 * cuda_emu.h - just enough of the CUDA device model, on CPU threads, to run this
 * project's kernels without a GPU (a development check, not a product).
 *
 * Each CUDA thread of a block is a std::thread; blocks run one after another.
 * __syncthreads is a block-wide std::barrier, and the warp intrinsics the kernels use
 * (__ballot_sync, __match_any_sync, __shfl*_sync) exchange values through a per-warp
 * barrier, so lanes behave as if in lockstep at those points. A kernel that calls a warp
 * intrinsic from divergent code deadlocks here, which the watchdog in the test reports.
 * `__shared__` becomes `static`: one block runs at a time, so that is per-block state.
 *
 * Include after the CUDA host headers (their host_defines.h would redefine the
 * qualifiers) and before the kernel source.
 */
#ifndef MIEB_TESTS_CUDA_EMU_H
#define MIEB_TESTS_CUDA_EMU_H

#include <cuda_runtime_api.h> /* first: its host_defines.h must not override ours */

#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#undef __restrict__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __restrict__ __restrict

struct emu_dim3 {
    unsigned int x = 1, y = 1, z = 1;
};
inline thread_local emu_dim3 threadIdx, blockIdx;
inline emu_dim3 blockDim, gridDim;

struct emu_warp {
    std::barrier<> bar{32};
    uint64_t vals[32];
};
struct emu_block {
    std::unique_ptr<std::barrier<>> bar;
    std::vector<std::unique_ptr<emu_warp>> warps;
};
inline emu_block *emu_cur_block;

inline void __syncthreads() { emu_cur_block->bar->arrive_and_wait(); }
inline void __syncwarp(unsigned int = 0xffffffffu) { emu_cur_block->warps[threadIdx.x / 32]->bar.arrive_and_wait(); }

/* Every lane deposits v; after the barrier each lane reads what it needs; a second
 * barrier keeps the next intrinsic from overwriting values still being read. */
template <class F>
inline auto emu_warp_exchange(uint64_t v, F read)
{
    emu_warp &w = *emu_cur_block->warps[threadIdx.x / 32];
    w.vals[threadIdx.x & 31] = v;
    w.bar.arrive_and_wait();
    auto r = read(w.vals, threadIdx.x & 31);
    w.bar.arrive_and_wait();
    return r;
}

template <class T>
inline uint64_t emu_bits(T v)
{
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof v);
    return b;
}
template <class T>
inline T emu_from_bits(uint64_t b)
{
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

inline unsigned int __ballot_sync(unsigned int mask, int pred)
{
    return mask & emu_warp_exchange(pred ? 1 : 0, [](const uint64_t *vals, unsigned) {
               unsigned int r = 0;
               for (int l = 0; l < 32; l++)
                   if (vals[l])
                       r |= 1u << l;
               return r;
           });
}

template <class T>
inline unsigned int __match_any_sync(unsigned int mask, T v)
{
    return mask & emu_warp_exchange(emu_bits(v), [](const uint64_t *vals, unsigned lane) {
               unsigned int r = 0;
               for (int l = 0; l < 32; l++)
                   if (vals[l] == vals[lane])
                       r |= 1u << l;
               return r;
           });
}

template <class T>
inline T __shfl_sync(unsigned int, T v, int src)
{
    return emu_from_bits<T>(emu_warp_exchange(emu_bits(v), [src](const uint64_t *vals, unsigned) {
        return vals[src & 31];
    }));
}
template <class T>
inline T __shfl_down_sync(unsigned int, T v, unsigned int delta)
{
    return emu_from_bits<T>(emu_warp_exchange(emu_bits(v), [delta](const uint64_t *vals, unsigned lane) {
        return lane + delta < 32 ? vals[lane + delta] : vals[lane];
    }));
}
template <class T>
inline T __shfl_xor_sync(unsigned int, T v, int m)
{
    return emu_from_bits<T>(emu_warp_exchange(emu_bits(v), [m](const uint64_t *vals, unsigned lane) {
        return vals[(lane ^ (unsigned)m) & 31];
    }));
}

inline int __ffs(unsigned int x) { return __builtin_ffs((int)x); }
inline int __float_as_int(float f) { return emu_from_bits<int>(emu_bits(f)); }
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline unsigned int atomicAdd(unsigned int *p, unsigned int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }

/* Run kernel() for every thread of a grid of blocks (x and y), one block at a time. */
template <class F>
inline void emu_launch(emu_dim3 grid, unsigned int threads, F kernel)
{
    gridDim = grid;
    blockDim = emu_dim3{threads, 1, 1};
    for (unsigned int by = 0; by < grid.y; by++)
        for (unsigned int bx = 0; bx < grid.x; bx++) {
            emu_block b;
            b.bar = std::make_unique<std::barrier<>>(threads);
            for (unsigned int w = 0; w < threads / 32; w++)
                b.warps.push_back(std::make_unique<emu_warp>());
            emu_cur_block = &b;
            std::vector<std::thread> ts;
            ts.reserve(threads);
            for (unsigned int t = 0; t < threads; t++)
                ts.emplace_back([&, t] {
                    threadIdx = emu_dim3{t, 0, 0};
                    blockIdx = emu_dim3{bx, by, 0};
                    kernel();
                });
            for (auto &th : ts)
                th.join();
        }
}

#endif
