/**
 * check_screen_int8.h - the int8 screen's kernels (kernels/screen_int8.cu) on the emulator, each
 * against a plain C definition written out here from docs/SCREEN_INT8.md, bit for bit.
 * Part of test_kernels_emu.cpp (included after its helpers: EXPECT, rnd, ref_canon_dot,
 * same_bits), which calls check_screen_i8().
 */

/* ---- the definitions ---- */

struct screen_i8_ref_row {
    std::vector<int8_t> q;
    float s = 0, n = 0, r = 0, h = 0;
    bool ok = true;
};

/* Section 1: s = fl(max|x| / 127) (0 for a zero or non-finite row), q = clamp(rint(x / s)), the
 * residual in one fma, the sums of squares in 8 lanes (element k in lane k mod 8) added as
 * ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)), and the norm bounds in double with their margins. */
static screen_i8_ref_row screen_i8_ref_quantise(const float *x, int64_t K, int64_t KP)
{
    screen_i8_ref_row o;
    o.q.assign((size_t)KP, 0);
    float mx = 0.0f;
    for (int64_t k = 0; k < K; k++)
        mx = std::max(mx, std::fabs(x[k])); /* a NaN element leaves mx */
    float s = mx / 127.0f;
    if (!(s > 0.0f) || !std::isfinite(s))
        s = 0.0f;
    float sa[8] = {0}, ra[8] = {0};
    int64_t qq = 0;
    for (int64_t k = 0; k < K; k++) {
        float q = 0.0f;
        if (s > 0.0f) {
            q = std::nearbyint(x[k] / s); /* a NaN element quantises to 0 */
            q = std::isnan(q) ? 0.0f : std::min(127.0f, std::max(-127.0f, q));
        }
        const float r = std::fma(-s, q, x[k]);
        o.q[(size_t)k] = (int8_t)q;
        qq += (int64_t)q * (int64_t)q;
        sa[k % 8] = std::fma(x[k], x[k], sa[k % 8]);
        ra[k % 8] = std::fma(r, r, ra[k % 8]);
    }
    const float ss = ((sa[0] + sa[4]) + (sa[2] + sa[6])) + ((sa[1] + sa[5]) + (sa[3] + sa[7]));
    const float rs = ((ra[0] + ra[4]) + (ra[2] + ra[6])) + ((ra[1] + ra[5]) + (ra[3] + ra[7]));
    const double M = 1.0 + 1.0 / 1048576.0, g = (double)(K + 64) * 2.0 / 16777216.0;
    const double n = std::sqrt((double)ss * (1.0 + g) + 0x1p-100) * M;
    const double r = std::sqrt((double)rs * (1.0 + g) + 0x1p-100) * M;
    o.s = s;
    o.ok = n <= 0x1p60 && r <= 0x1p60;
    o.n = (float)(n * M);
    o.r = (float)(r * M);
    o.h = (float)((double)s * std::sqrt((double)qq) * M * M);
    return o;
}

/* Sections 5 and 6: a = fl(fl(I) fl(sq sd)), e = fma(alpha, nd, fma(beta, rnd, s_abs)). */
static void screen_i8_ref_interval(int32_t I, float sq, float sd, float al, float be, float nd, float rnd, float sabs,
                             float *lb, float *ub)
{
    const float a = (float)I * (sq * sd);
    const float e = std::fma(al, nd, std::fma(be, rnd, sabs));
    *lb = a - e;
    *ub = a + e;
}

/* ---- the checks ---- */

/* A row of kind: 0 random mixed magnitudes, 1 zeros, 2 one huge component, 3 subnormal
 * elements only, 4 mixed normal and subnormal, 5 a NaN, 6 beyond 2^60, 7 ties at +-max. */
static void screen_i8_row(int kind, float *x, int64_t K)
{
    for (int64_t k = 0; k < K; k++) {
        float v = (float)((int)(rnd() % 2000001) - 1000000) / 1000000.0f;
        switch (kind) {
        case 1: v = 0.0f; break;
        case 2: v = k == K / 2 ? 3.0e5f : v * 1e-3f; break;
        case 3: v *= 1e-39f; break;
        case 4: v = rnd() % 2 ? v * 1e-41f : v * 1e-3f; break;
        case 5: v = k == K - 1 ? NAN : v; break;
        case 6: v = k == 0 ? 3e18f : v; break;
        case 7: v = rnd() % 3 == 0 ? (rnd() % 2 ? 0.75f : -0.75f) : v * 0.5f; break;
        default: v *= (float)(1 << (rnd() % 8)); break;
        }
        x[k] = v;
    }
}

static void check_si8_quantise(int64_t n, int64_t K)
{
    const int64_t KP = (K + 15) / 16 * 16;
    std::vector<float> X((size_t)(n * K)), s((size_t)n, 7.0f), nr((size_t)n), rn((size_t)n), hn((size_t)n);
    std::vector<int8_t> out((size_t)(n * KP), 99);
    for (int64_t r = 0; r < n; r++)
        screen_i8_row((int)(r % 8), &X[(size_t)(r * K)], K);
    mieb_screen_i8_counts cnt = {};
    emu_launch({(unsigned)((n + SCREEN_I8_THREADS - 1) / SCREEN_I8_THREADS), 1, 1}, SCREEN_I8_THREADS, [&] {
        screen_i8_quantise_kernel(X.data(), n, K, KP, out.data(), s.data(), nr.data(), rn.data(), hn.data(), &cnt);
    });
    int64_t bad = 0, refused = 0;
    for (int64_t r = 0; r < n; r++) {
        const screen_i8_ref_row w = screen_i8_ref_quantise(&X[(size_t)(r * K)], K, KP);
        refused += !w.ok;
        bool same = same_bits(s[(size_t)r], w.s) &&
                    std::memcmp(&out[(size_t)(r * KP)], w.q.data(), (size_t)KP) == 0;
        if (w.ok) /* a refused row's bounds are not defined */
            same = same && same_bits(nr[(size_t)r], w.n) && same_bits(rn[(size_t)r], w.r) &&
                   same_bits(hn[(size_t)r], w.h);
        if (!same && bad++ < 3)
            fprintf(stderr, "  si8 quantise K %lld row %lld (kind %d): s %a/%a n %a/%a r %a/%a h %a/%a\n",
                    (long long)K, (long long)r, (int)(r % 8), s[(size_t)r], w.s, nr[(size_t)r], w.n, rn[(size_t)r],
                    w.r, hn[(size_t)r], w.h);
    }
    EXPECT(bad == 0, "si8 quantise K %lld: %lld of %lld rows differ from the definition", (long long)K,
           (long long)bad, (long long)n);
    EXPECT((cnt.bad != 0) == (refused > 0), "si8 quantise K %lld: bad flag %u, %lld rows refused", (long long)K,
           cnt.bad, (long long)refused);
    printf("si8 quantise %lld rows K %lld (%lld refused): %s\n", (long long)n, (long long)K, (long long)refused,
           bad ? "MISMATCH" : "bit-identical");
}

static float screen_i8_rnd_pos(float lo_exp, float hi_exp)
{
    return std::ldexp(1.0f + (float)(rnd() % 1000) / 1000.0f,
                      (int)lo_exp + (int)(rnd() % (unsigned)(hi_exp - lo_exp + 1)));
}

static void check_si8_bound(int nr, int nc, int64_t ld)
{
    std::vector<float> S((size_t)(nr * ld)), lb((size_t)(nr * ld), 5.0f), sq(nr), al(nr), be(nr), sd(nc), nd(nc),
        rn(nc);
    std::vector<int32_t> I((size_t)(nr * ld));
    for (auto &v : I)
        v = (int32_t)(rnd() % 2000001) - 1000000 + (rnd() % 17 == 0 ? (int32_t)(rnd() % 2) * 2000000000 - 1000000000 : 0);
    std::memcpy(S.data(), I.data(), sizeof(float) * S.size());
    for (int r = 0; r < nr; r++) {
        sq[r] = r % 5 == 0 ? 0.0f : screen_i8_rnd_pos(-140, 10); /* zero and subnormal scales too */
        al[r] = screen_i8_rnd_pos(-100, 5);
        be[r] = screen_i8_rnd_pos(-100, 5);
    }
    for (int j = 0; j < nc; j++) {
        sd[j] = screen_i8_rnd_pos(-140, 10);
        nd[j] = screen_i8_rnd_pos(-60, 20);
        rn[j] = screen_i8_rnd_pos(-60, 10);
    }
    const float sabs = (float)(((double)(100 + 64) * 0x1p-125 + 100.0 * 0x1p-134) * (1.0 + 1.0 / 1048576.0));
    emu_launch({(unsigned)((nc + SCREEN_I8_THREADS - 1) / SCREEN_I8_THREADS), (unsigned)nr, 1}, SCREEN_I8_THREADS, [&] {
        screen_i8_bound_kernel(S.data(), lb.data(), ld, nc, sq.data(), al.data(), be.data(), sd.data(), nd.data(), rn.data(),
                         sabs);
    });
    int64_t bad = 0, untouched = 0;
    for (int r = 0; r < nr; r++) {
        for (int j = 0; j < nc; j++) {
            float wl, wu;
            screen_i8_ref_interval(I[(size_t)(r * ld + j)], sq[r], sd[j], al[r], be[r], nd[j], rn[j], sabs, &wl, &wu);
            if ((!same_bits(S[(size_t)(r * ld + j)], wu) || !same_bits(lb[(size_t)(r * ld + j)], wl)) && bad++ < 3)
                fprintf(stderr, "  si8 bound (%d, %d): [%a, %a], definition [%a, %a]\n", r, j,
                        lb[(size_t)(r * ld + j)], S[(size_t)(r * ld + j)], wl, wu);
        }
        for (int64_t j = nc; j < ld; j++)
            untouched += lb[(size_t)(r * ld + j)] != 5.0f;
    }
    EXPECT(bad == 0 && untouched == 0, "si8 bound %dx%d: %lld intervals differ, %lld cells past n written", nr, nc,
           (long long)bad, (long long)untouched);
    printf("si8 bound %dx%d (ld %lld): %s\n", nr, nc, (long long)ld, bad || untouched ? "MISMATCH" : "bit-identical");
}

/* The candidates: every (r, j) with ub >= max(floor, kth lb) once, nothing else; S all -inf. */
static void check_si8_select(int nr, int nc, int64_t ld, uint32_t cap)
{
    std::vector<float> S((size_t)(nr * ld), 3.0f), fl(nr);
    std::vector<uint64_t> thr(nr);
    std::vector<uint32_t> pairs(cap, 0xffffffffu);
    for (int r = 0; r < nr; r++) {
        for (int j = 0; j < nc; j++) /* quarters: ties with tau are common */
            S[(size_t)(r * ld + j)] = (float)((int)(rnd() % 17) - 8) * 0.25f;
        fl[r] = r % 3 == 0 ? -INFINITY : (float)((int)(rnd() % 9) - 4) * 0.25f;
        thr[r] = r % 4 == 1 ? 0 : mieb_topk_key((float)((int)(rnd() % 9) - 4) * 0.25f, rnd() % 1000);
        if (r % 7 == 3)
            thr[r] = mieb_topk_key(-0.0f, 5); /* a -0 k-th lower bound: ties with +0 */
    }
    std::vector<uint32_t> want;
    for (int r = 0; r < nr; r++) {
        float tau = fl[r];
        if (thr[r])
            tau = std::max(tau, mieb_topk_key_score(thr[r]));
        for (int j = 0; j < nc; j++)
            if (S[(size_t)(r * ld + j)] >= tau)
                want.push_back((uint32_t)(r * ld + j));
    }
    mieb_screen_i8_counts cnt = {};
    emu_launch({(unsigned)((nc + SCREEN_I8_THREADS - 1) / SCREEN_I8_THREADS), (unsigned)nr, 1}, SCREEN_I8_THREADS, [&] {
        screen_i8_select_kernel(S.data(), ld, nc, fl.data(), thr.data(), pairs.data(), cap, &cnt);
    });
    const bool over = want.size() > cap;
    std::vector<uint32_t> got(pairs.begin(), pairs.begin() + std::min<size_t>(cap, want.size()));
    std::sort(got.begin(), got.end());
    bool ok = cnt.count == want.size() && (cnt.overflow != 0) == over;
    if (!over)
        ok = ok && got == want;
    else /* the first cap appended: distinct candidates */
        ok = ok && std::adjacent_find(got.begin(), got.end()) == got.end() &&
             std::all_of(got.begin(), got.end(), [&](uint32_t p) { return std::binary_search(want.begin(), want.end(), p); });
    int64_t not_inf = 0;
    for (int r = 0; r < nr; r++)
        for (int64_t j = 0; j < ld; j++)
            not_inf += j < nc ? S[(size_t)(r * ld + j)] != -INFINITY : S[(size_t)(r * ld + j)] != 3.0f;
    EXPECT(ok && not_inf == 0, "si8 select %dx%d cap %u: count %u want %zu, overflow %u, %lld cells wrong", nr, nc, cap,
           cnt.count, want.size(), cnt.overflow, (long long)not_inf);
    printf("si8 select %dx%d cap %u: %zu candidates%s: %s\n", nr, nc, cap, want.size(), over ? " (overflow)" : "",
           ok && not_inf == 0 ? "ok" : "MISMATCH");
}

/* The listed pairs get the definition's dot product, the rest of S stays; only min(count, cap). */
static void check_si8_rescore(int nr, int nc, int64_t K, unsigned grid, int extra)
{
    const int64_t ld = nc + 3;
    std::vector<float> Q((size_t)(nr * K)), D((size_t)(nc * K)), S((size_t)(nr * ld), -INFINITY);
    for (auto &x : Q)
        x = rnd_value(rnd() % 4 == 0 ? 1 : 0);
    for (auto &x : D)
        x = rnd() % 4 == 0 ? 1e-30f : rnd_value(0);
    std::vector<uint32_t> all;
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < nc; j++)
            if (rnd() % 3 == 0)
                all.push_back((uint32_t)(r * ld + j));
    std::shuffle(all.begin(), all.end(), std::mt19937(rnd()));
    const uint32_t cap = (uint32_t)all.size(); /* extra: the counter says more than the list holds */
    mieb_screen_i8_counts cnt = {};
    cnt.count = cap + (uint32_t)extra;
    cnt.scored = 11;
    emu_launch({grid, 1, 1}, SCREEN_I8_THREADS, [&] {
        screen_i8_rescore_kernel(Q.data(), D.data(), K, all.data(), cap, &cnt, S.data(), ld);
    });
    std::vector<char> listed((size_t)(nr * ld), 0);
    for (uint32_t p : all)
        listed[p] = 1;
    int64_t bad = 0;
    for (int r = 0; r < nr; r++)
        for (int64_t j = 0; j < ld; j++) {
            const size_t p = (size_t)(r * ld + j);
            const float want = listed[p] ? ref_canon_dot(&Q[(size_t)(r * K)], &D[(size_t)(j * K)], K) : -INFINITY;
            if (!same_bits(S[p], want) && bad++ < 3)
                fprintf(stderr, "  si8 rescore K %lld (%d, %lld): %a, definition %a\n", (long long)K, r, (long long)j,
                        S[p], want);
        }
    EXPECT(bad == 0 && cnt.scored == 11 + cap, "si8 rescore K %lld: %lld scores differ, scored %llu", (long long)K,
           (long long)bad, (unsigned long long)cnt.scored);
    printf("si8 rescore %zu pairs K %lld (grid %u): %s\n", all.size(), (long long)K, grid,
           bad ? "MISMATCH" : "bit-identical");
}

static void check_screen_i8()
{
    static const int64_t Ks[] = {1, 7, 16, 17, 33, 100, 769};
    for (int64_t K : Ks)
        check_si8_quantise(300, K);
    check_si8_bound(7, 300, 300);
    check_si8_bound(5, 301, 304); /* a tile's odd width in an int32-aligned row */
    check_si8_select(9, 300, 300, 100000);
    check_si8_select(6, 517, 520, 100000);
    check_si8_select(6, 517, 520, 40); /* the list overflows */
    check_si8_rescore(5, 40, 17, 2, 0);
    check_si8_rescore(3, 30, 100, 1, 0); /* one block strides over the list */
    check_si8_rescore(4, 25, 16, 3, 9);  /* the counter past the list: only the list is scored */
    check_si8_rescore(2, 20, 1, 2, 0);
}
