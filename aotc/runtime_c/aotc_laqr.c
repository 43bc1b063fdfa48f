/* aotc_laqr.c -- the multishift QR with aggressive early deflation that LAPACK's ?hseqr runs on real
 * Hessenberg matrices of order n > 75 (?laqr0), so that aotc_schur.c's real Schur form and eigenvalues
 * (lapack_[sd]gees_ffi, lapack_[sd]geev_ffi) come out in LAPACK's order there too.  The algorithm,
 * step by step, of LAPACK 3.12 as OpenBLAS 0.3.30 ships it:
 *   ?laqr0 / ?laqr4 (P##_rs_laqr04): the outer loop -- deflation window size (NW, grown when nothing
 *     deflates), shifts from the window's undeflated eigenvalues (sorted by magnitude, pairs kept
 *     together) or exceptional ones, one multishift sweep per iteration;
 *   ?laqr3 / ?laqr2 (P##_rs_laqr23): aggressive early deflation -- the trailing window's Schur form
 *     (by ?lahqr, or by ?laqr4 on windows wider than 75 from ?laqr3), its spike tested entry by
 *     entry, undeflatable blocks moved up by ?trexc (?laexc, ?lasy2, ?larfx, ?lartg), the window
 *     returned to Hessenberg form (?gehd2's math) and the rest of H and Z updated (?orm2r's math,
 *     then the products LAPACK makes with ?gemm);
 *   ?laqr5 (P##_rs_laqr5) with ?laqr1: a chain of 3 x 3 bulges chased down together, the reflections
 *     applied directly (KACC22 0) or accumulated per sweep segment in U and applied by products;
 *   ?hseqr (P##_rs_hseqr): eigenvalues isolated by ?gebal read off the diagonal, ?laqr0 for n > 75,
 *     else ?lahqr (aotc_schur.c's P##_rs_lahqr on the whole matrix) with ?hseqr's rescue by ?laqr0.
 * iparmq's parameters as LAPACK sets them (NMIN 75, NIBBLE 14, NS and NW from the active size,
 * KACC22 2 from 14 shifts on), and every workspace-dependent choice as if the caller had passed
 * LAPACK's optimal lwork (?gees and ?geev do): NWMAX = (n-1)/3 and NSMAX = (n-3)/6 at every level.
 * Always wantt (the whole triangle updated); wantz unless z is NULL (the shifts' own Schur forms).
 * Differences from LAPACK in rounding only: ?gemm's products are plain sums in k order, ?gehrd
 * and ?ormhr are their unblocked forms (LAPACK blocks ?ormqr past 33 undeflated window entries and
 * ?gehrd past 128), ?gemv/?ger/?rot sum in their reference order.  With reference BLAS (and ?nrm2
 * as P##_rs_nrm2) LAPACK gives the same bits up to n = 200; OpenBLAS's kernels round differently,
 * and from n ~ 100 that alone often moves a few eigenvalues in LAPACK's own order.
 * Row-major: entry (i, j) of a matrix with leading dimension ld is x[i*ld + j]; indices 0-based.
 * Work: LAPACK carves ?laqr3's and ?laqr5's arrays out of H below its subdiagonal; here they come
 * from `work` (AOTC_LA_LAQR_WORK(n) elements), and the part of H below the subdiagonal is zero on
 * return (as ?hseqr leaves it).  Instantiated inside aotc_schur.c's AOTC__LA_GEES_REAL, after the
 * helpers it uses (P##_rs_larfg, _lanv2, _rot, _sign, _max, _min, _lapy2, _lahqr).
 */
#ifndef AOTC_LAQR_C
#define AOTC_LAQR_C 1 /* the guard of aotc_schur.c's #include of this file */
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Elements of T P##_rs_hseqr's `work` takes for an n x n matrix: ?laqr0's largest need at any level
   (the deflation window's T and V, nw x nw each with nw <= (n-1)/3, three vectors, and the recursive
   ?laqr4's own, below n^2/4 + 4n; ?laqr5's U is (2 ns)^2 with ns <= (n-3)/6), plus 3200 for ?hseqr's
   rescue of a small matrix whose ?lahqr failed (a 49 x 49 copy and ?laqr0's work on it). */
#define AOTC_LA_LAQR_WORK(n) ((n) * (n) / 4 + 4 * (n) + 3200)

/* entry (r, c) of the row-major x with leading dimension ld */
#define AOTC__LQ(x, ld, r, c) (x)[(int64_t)(r) * (ld) + (c)]

#ifndef AOTC_LAQR5_C
#include "aotc_laqr5.c" /* ?laqr5 and ?laqr1 (AOTC__LA_LAQR5_REAL) */
#endif
#ifndef AOTC_LAQR_SWAP_C
#include "aotc_laqr_swap.c" /* ?trexc, ?laexc, ?lasy2, ?larfx, ?lartg (AOTC__LA_LAQR_SWAP_REAL) */
#endif

#define AOTC__LA_LAQR_REAL(P, T)                                                                                      \
/* s + x y: one term of a ?gemm product, in k order (product rounded, then added) */                                  \
AOTC_INLINE T P##_lq_madd(T s, T x, T y) { return s + x * y; }                                                        \
                                                                                                                      \
/* iparmq's shift count NS for an active block of nh rows (also the window NW up to nh = 500) */                      \
AOTC_INLINE int64_t P##_lq_iparmq_ns(int64_t nh) {                                                                    \
  int64_t ns = 2;                                                                                                     \
  if (nh >= 30) ns = 4;                                                                                               \
  if (nh >= 60) ns = 10;                                                                                              \
  if (nh >= 150) { /* nh / nint(log2(nh)), in single precision as iparmq */                                           \
    const int64_t l2 = (int64_t)lroundf(logf((float)nh) / logf(2.0f));                                                \
    ns = nh / l2 > 10 ? nh / l2 : 10;                                                                                 \
  }                                                                                                                   \
  if (nh >= 590) ns = 64;                                                                                             \
  if (nh >= 3000) ns = 128;                                                                                           \
  if (nh >= 6000) ns = 256;                                                                                           \
  ns -= ns % 2;                                                                                                       \
  return ns > 2 ? ns : 2;                                                                                             \
}                                                                                                                     \
                                                                                                                      \
/* (I - tau v v^T) x on rows 0..m-1, columns 0..nc-1 of x (left; v of length m, stride incv) or x (I - tau            \
   v v^T) (right; v of length nc), v's trailing zeros and x's trailing zero columns (left) or rows (right)            \
   skipped (?larf; ?gemv's and ?ger's reference order).  w: nc (left) or m (right) scratch. */                        \
AOTC_INLINE void P##_lq_larf(int right, int64_t m, int64_t nc, const T* v, int64_t incv, T tau, T* x, int64_t ld,     \
                              T* w) {                                                                                 \
  if (tau == (T)0) return;                                                                                            \
  int64_t lastv = right ? nc : m, lastc = right ? m : nc;                                                             \
  while (lastv > 0 && v[(lastv - 1) * incv] == (T)0) --lastv;                                                         \
  for (int zero = 1; lastc > 0 && zero; lastc -= zero) /* the last nonzero column (left) or row (right) */            \
    for (int64_t i = 0; i < lastv && zero; ++i)                                                                       \
      zero = (right ? AOTC__LQ(x, ld, lastc - 1, i) : AOTC__LQ(x, ld, i, lastc - 1)) == (T)0;                         \
  if (!right) {                                                                                                       \
    for (int64_t j = 0; j < lastc; ++j) {                                                                             \
      T acc = (T)0;                                                                                                   \
      for (int64_t i = 0; i < lastv; ++i) acc += AOTC__LQ(x, ld, i, j) * v[i * incv];                                 \
      w[j] = acc;                                                                                                     \
    }                                                                                                                 \
    for (int64_t j = 0; j < lastc; ++j) {                                                                             \
      const T temp = -tau * w[j];                                                                                     \
      for (int64_t i = 0; i < lastv; ++i) AOTC__LQ(x, ld, i, j) += v[i * incv] * temp;                                \
    }                                                                                                                 \
  } else {                                                                                                            \
    for (int64_t i = 0; i < lastc; ++i) w[i] = (T)0;                                                                  \
    for (int64_t j = 0; j < lastv; ++j)                                                                               \
      for (int64_t i = 0; i < lastc; ++i) w[i] += v[j * incv] * AOTC__LQ(x, ld, i, j);                                \
    for (int64_t j = 0; j < lastv; ++j) {                                                                             \
      const T temp = -tau * v[j * incv];                                                                              \
      for (int64_t i = 0; i < lastc; ++i) AOTC__LQ(x, ld, i, j) += w[i] * temp;                                       \
    }                                                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* x[0..m) (stride inc: part of a row of h or z, or of a column) := x v for the m x m row-major v (a ?gemm            \
   product's row or, read as v^T x, its column; k order); tmp: m scratch */                                           \
AOTC_INLINE void P##_lq_rowmul(int64_t m, T* x, int64_t inc, const T* v, int64_t ldv, T* tmp) {                       \
  for (int64_t j = 0; j < m; ++j) {                                                                                   \
    T acc = (T)0;                                                                                                     \
    for (int64_t l = 0; l < m; ++l) acc = P##_lq_madd(acc, x[l * inc], AOTC__LQ(v, ldv, l, j));                       \
    tmp[j] = acc;                                                                                                     \
  }                                                                                                                   \
  for (int64_t j = 0; j < m; ++j) x[j * inc] = tmp[j];                                                                \
}                                                                                                                     \
                                                                                                                      \
AOTC__LA_LAQR_SWAP_REAL(P, T)                                                                                         \
                                                                                                                      \
AOTC__LA_LAQR5_REAL(P, T)                                                                                             \
                                                                                                                      \
/* forward: ?laqr3 runs ?laqr4 on wide windows */                                                                     \
AOTC_INLINE int32_t P##_rs_laqr04(int rec, int64_t n, int64_t ilo, int64_t ihi, T* h, int64_t ldh, T* wr, T* wi,      \
                             int64_t iloz, int64_t ihiz, T* z, int64_t ldz, T* work);                                 \
                                                                                                                      \
/* Aggressive early deflation (?laqr3 with rec, else ?laqr2) on the trailing nw x nw window of the active             \
   block ktop..kbot of h: *nd eigenvalues deflated (the bottom rows, converged), *ns undeflated ones left in          \
   sr/si[kbot - *nd - *ns + 1 .. kbot - *nd] for shifts; h and z (rows iloz..ihiz, NULL: none) updated.               \
   work: 2 nw^2 + 3 nw, and ?laqr4's for nw > 75. */                                                                  \
AOTC_INLINE void P##_rs_laqr23(int rec, int64_t n, int64_t ktop, int64_t kbot, int64_t nw, T* h, int64_t ldh,         \
                               int64_t iloz, int64_t ihiz, T* z, int64_t ldz, int64_t* ns, int64_t* nd, T* sr, T* si, \
                               T* work) {                                                                             \
  *ns = 0;                                                                                                            \
  *nd = 0;                                                                                                            \
  if (ktop > kbot || nw < 1) return;                                                                                  \
  const T safmin = P##_sfmin(), ulp = P##_eps(), smlnum = safmin * ((T)n / ulp);                                      \
  const int64_t jw = nw < kbot - ktop + 1 ? nw : kbot - ktop + 1, kwtop = kbot - jw + 1;                              \
  T s = kwtop == ktop ? (T)0 : AOTC__LQ(h, ldh, kwtop, kwtop - 1);                                                    \
  if (kbot == kwtop) { /* a 1 x 1 window */                                                                           \
    sr[kwtop] = AOTC__LQ(h, ldh, kwtop, kwtop);                                                                       \
    si[kwtop] = (T)0;                                                                                                 \
    *ns = 1;                                                                                                          \
    if (P##_fabs(s) <= P##_rs_max(smlnum, ulp * P##_fabs(AOTC__LQ(h, ldh, kwtop, kwtop)))) {                          \
      *ns = 0;                                                                                                        \
      *nd = 1;                                                                                                        \
      if (kwtop > ktop) AOTC__LQ(h, ldh, kwtop, kwtop - 1) = (T)0;                                                    \
    }                                                                                                                 \
    return;                                                                                                           \
  }                                                                                                                   \
  T* t = work;              /* the window, jw x jw */                                                                 \
  T* v = t + jw * jw;       /* its Schur vectors, jw x jw */                                                          \
  T* vec = v + jw * jw;     /* the spike's reflector */                                                               \
  T* tau = vec + jw;        /* ?gehd2's reflectors */                                                                 \
  T* tmp = tau + jw;        /* a row or column of a product */                                                        \
  T* rest = tmp + jw;       /* ?laqr4's work */                                                                       \
  memset(t, 0, (size_t)(jw * jw) * sizeof(T));                                                                        \
  for (int64_t i = 0; i < jw; ++i) {                                                                                  \
    for (int64_t j = i; j < jw; ++j) AOTC__LQ(t, jw, i, j) = AOTC__LQ(h, ldh, kwtop + i, kwtop + j);                  \
    if (i > 0) AOTC__LQ(t, jw, i, i - 1) = AOTC__LQ(h, ldh, kwtop + i, kwtop + i - 1);                                \
  }                                                                                                                   \
  for (int64_t i = 0; i < jw * jw; ++i) v[i] = (T)0;                                                                  \
  for (int64_t i = 0; i < jw; ++i) AOTC__LQ(v, jw, i, i) = (T)1;                                                      \
  int64_t infqr;                                                                                                      \
  if (rec && jw > 75)                                                                                                 \
    infqr = P##_rs_laqr04(0, jw, 0, jw - 1, t, jw, sr + kwtop, si + kwtop, 0, jw - 1, v, jw, rest);                   \
  else                                                                                                                \
    infqr = P##_rs_lahqr(jw, t, v, sr + kwtop, si + kwtop);                                                           \
  for (int64_t j = 0; j + 3 < jw; ++j) { AOTC__LQ(t, jw, j + 2, j) = (T)0; AOTC__LQ(t, jw, j + 3, j) = (T)0; }        \
  if (jw > 2) AOTC__LQ(t, jw, jw - 1, jw - 3) = (T)0;                                                                 \
  /* deflation checks from the bottom; an undeflatable block moved to the top (ilst) */                               \
  int64_t nsw = jw, ilst = infqr, ifst;                                                                               \
  while (ilst < nsw) {                                                                                                \
    const int bulge = nsw > 1 && AOTC__LQ(t, jw, nsw - 1, nsw - 2) != (T)0;                                           \
    T foo;                                                                                                            \
    if (!bulge) {                                                                                                     \
      foo = P##_fabs(AOTC__LQ(t, jw, nsw - 1, nsw - 1));                                                              \
      if (foo == (T)0) foo = P##_fabs(s);                                                                             \
      if (P##_fabs(s * AOTC__LQ(v, jw, 0, nsw - 1)) <= P##_rs_max(smlnum, ulp * foo)) {                               \
        --nsw;                                                                                                        \
      } else {                                                                                                        \
        ifst = nsw - 1;                                                                                               \
        P##_lq_trexc(jw, t, jw, v, jw, &ifst, &ilst);                                                                 \
        ++ilst;                                                                                                       \
      }                                                                                                               \
    } else {                                                                                                          \
      foo = P##_fabs(AOTC__LQ(t, jw, nsw - 1, nsw - 1)) + P##_sqrt(P##_fabs(AOTC__LQ(t, jw, nsw - 1, nsw - 2))) *     \
                                                             P##_sqrt(P##_fabs(AOTC__LQ(t, jw, nsw - 2, nsw - 1)));   \
      if (foo == (T)0) foo = P##_fabs(s);                                                                             \
      if (P##_rs_max(P##_fabs(s * AOTC__LQ(v, jw, 0, nsw - 1)), P##_fabs(s * AOTC__LQ(v, jw, 0, nsw - 2))) <=         \
          P##_rs_max(smlnum, ulp * foo)) {                                                                            \
        nsw -= 2;                                                                                                     \
      } else {                                                                                                        \
        ifst = nsw - 1;                                                                                               \
        P##_lq_trexc(jw, t, jw, v, jw, &ifst, &ilst);                                                                 \
        ilst += 2;                                                                                                    \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
  if (nsw == 0) s = (T)0;                                                                                             \
  if (nsw < jw) { /* the undeflated part sorted by decreasing magnitude (bubble sort by ?trexc) */                    \
    int sorted = 0;                                                                                                   \
    int64_t i = nsw, k;                                                                                               \
    while (!sorted) {                                                                                                 \
      sorted = 1;                                                                                                     \
      const int64_t kend = i - 1;                                                                                     \
      i = infqr;                                                                                                      \
      k = i == nsw - 1 || AOTC__LQ(t, jw, i + 1, i) == (T)0 ? i + 1 : i + 2;                                          \
      while (k <= kend) {                                                                                             \
        T evi = P##_fabs(AOTC__LQ(t, jw, i, i)), evk = P##_fabs(AOTC__LQ(t, jw, k, k));                               \
        if (k != i + 1)                                                                                               \
          evi += P##_sqrt(P##_fabs(AOTC__LQ(t, jw, i + 1, i))) * P##_sqrt(P##_fabs(AOTC__LQ(t, jw, i, i + 1)));       \
        if (k != kend && AOTC__LQ(t, jw, k + 1, k) != (T)0)                                                           \
          evk += P##_sqrt(P##_fabs(AOTC__LQ(t, jw, k + 1, k))) * P##_sqrt(P##_fabs(AOTC__LQ(t, jw, k, k + 1)));       \
        if (evi >= evk) {                                                                                             \
          i = k;                                                                                                      \
        } else {                                                                                                      \
          sorted = 0;                                                                                                 \
          ifst = i;                                                                                                   \
          ilst = k;                                                                                                   \
          i = P##_lq_trexc(jw, t, jw, v, jw, &ifst, &ilst) == 0 ? ilst : k;                                           \
        }                                                                                                             \
        k = i == kend || AOTC__LQ(t, jw, i + 1, i) == (T)0 ? i + 1 : i + 2;                                           \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
  for (int64_t i = jw - 1; i >= infqr;) { /* the window's eigenvalues */                                              \
    if (i == infqr || AOTC__LQ(t, jw, i, i - 1) == (T)0) {                                                            \
      sr[kwtop + i] = AOTC__LQ(t, jw, i, i);                                                                          \
      si[kwtop + i] = (T)0;                                                                                           \
      --i;                                                                                                            \
    } else {                                                                                                          \
      T aa = AOTC__LQ(t, jw, i - 1, i - 1), cc = AOTC__LQ(t, jw, i, i - 1);                                           \
      T bb = AOTC__LQ(t, jw, i - 1, i), dd = AOTC__LQ(t, jw, i, i), cs, sn;                                           \
      P##_rs_lanv2(&aa, &bb, &cc, &dd, &sr[kwtop + i - 1], &si[kwtop + i - 1], &sr[kwtop + i], &si[kwtop + i], &cs,   \
                   &sn);                                                                                              \
      i -= 2;                                                                                                         \
    }                                                                                                                 \
  }                                                                                                                   \
  if (nsw < jw || s == (T)0) {                                                                                        \
    const int refl = nsw > 1 && s != (T)0;                                                                            \
    if (refl) { /* the spike's undeflated part reflected onto its first entry, T back to Hessenberg form */           \
      for (int64_t j = 0; j < nsw; ++j) vec[j] = AOTC__LQ(v, jw, 0, j);                                               \
      T beta = vec[0];                                                                                                \
      const T tv = P##_rs_larfg(nsw, &beta, vec + 1, 1);                                                              \
      vec[0] = (T)1;                                                                                                  \
      for (int64_t i = 2; i < jw; ++i)                                                                                \
        for (int64_t j = 0; j + 2 <= i; ++j) AOTC__LQ(t, jw, i, j) = (T)0;                                            \
      P##_lq_larf(0, nsw, jw, vec, 1, tv, t, jw, tmp);                                                                \
      P##_lq_larf(1, nsw, nsw, vec, 1, tv, t, jw, tmp);                                                               \
      P##_lq_larf(1, jw, nsw, vec, 1, tv, v, jw, tmp);                                                                \
      for (int64_t i = 0; i + 1 < nsw; ++i) { /* ?gehd2 with ilo = 1, ihi = nsw */                                    \
        T* vi = &AOTC__LQ(t, jw, i + 1, i);                                                                           \
        tau[i] = P##_rs_larfg(nsw - 1 - i, vi, &AOTC__LQ(t, jw, i + 2 < jw ? i + 2 : jw - 1, i), jw);                 \
        const T aii = *vi;                                                                                            \
        *vi = (T)1;                                                                                                   \
        P##_lq_larf(1, nsw, nsw - 1 - i, vi, jw, tau[i], &AOTC__LQ(t, jw, 0, i + 1), jw, tmp);                        \
        P##_lq_larf(0, nsw - 1 - i, jw - 1 - i, vi, jw, tau[i], &AOTC__LQ(t, jw, i + 1, i + 1), jw, tmp);             \
        AOTC__LQ(t, jw, i + 1, i) = aii;                                                                              \
      }                                                                                                               \
    }                                                                                                                 \
    if (kwtop > 0) AOTC__LQ(h, ldh, kwtop, kwtop - 1) = s * AOTC__LQ(v, jw, 0, 0);                                    \
    for (int64_t i = 0; i < jw; ++i) {                                                                                \
      for (int64_t j = i; j < jw; ++j) AOTC__LQ(h, ldh, kwtop + i, kwtop + j) = AOTC__LQ(t, jw, i, j);                \
      if (i > 0) AOTC__LQ(h, ldh, kwtop + i, kwtop + i - 1) = AOTC__LQ(t, jw, i, i - 1);                              \
    }                                                                                                                 \
    if (refl) /* ?orm2r: v := v Q, Q = H(0) .. H(nsw-2) of ?gehd2, on v's columns 1..nsw-1 */                         \
      for (int64_t i = 0; i + 1 < nsw; ++i) {                                                                         \
        const T aii = AOTC__LQ(t, jw, i + 1, i);                                                                      \
        AOTC__LQ(t, jw, i + 1, i) = (T)1;                                                                             \
        P##_lq_larf(1, jw, nsw - 1 - i, &AOTC__LQ(t, jw, i + 1, i), jw, tau[i], &AOTC__LQ(v, jw, 0, i + 1), jw, tmp); \
        AOTC__LQ(t, jw, i + 1, i) = aii;                                                                              \
      }                                                                                                               \
    /* the rest of h and z: rows above the window times v, v^T times the columns right of it */                       \
    for (int64_t r = 0; r < kwtop; ++r) P##_lq_rowmul(jw, &AOTC__LQ(h, ldh, r, kwtop), 1, v, jw, tmp);                \
    for (int64_t c = kbot + 1; c < n; ++c) P##_lq_rowmul(jw, &AOTC__LQ(h, ldh, kwtop, c), ldh, v, jw, tmp);           \
    if (z)                                                                                                            \
      for (int64_t r = iloz; r <= ihiz; ++r) P##_lq_rowmul(jw, &AOTC__LQ(z, ldz, r, kwtop), 1, v, jw, tmp);           \
  }                                                                                                                   \
  *nd = jw - nsw;                                                                                                     \
  *ns = nsw - infqr;                                                                                                  \
}                                                                                                                     \
                                                                                                                      \
/* The multishift QR with aggressive early deflation (?laqr0 with rec, else ?laqr4) on rows and columns               \
   ilo..ihi of the n x n upper Hessenberg h (n > 15; rows/columns outside updated as wantt), z's rows                 \
   iloz..ihiz accumulating (NULL: none); wr/wi[ilo..ihi] the eigenvalues.  Returns 0, or LAPACK's info:               \
   the 1-based kbot above which everything converged. */                                                              \
AOTC_INLINE int32_t P##_rs_laqr04(int rec, int64_t n, int64_t ilo, int64_t ihi, T* h, int64_t ldh, T* wr, T* wi,      \
                             int64_t iloz, int64_t ihiz, T* z, int64_t ldz, T* work) {                                \
  const int64_t ntiny = 15, kexnw = 5, kexsh = 6, nmin = 75, nibble = 14;                                             \
  const T wilk1 = (T)0.75, wilk2 = (T)-0.4375;                                                                        \
  if (n <= ntiny) return 0; /* never: ?hseqr's dispatch and the window sizes keep n > 75 here */                      \
  const int64_t nh0 = ihi - ilo + 1, ns0 = P##_lq_iparmq_ns(nh0);                                                     \
  int64_t nwr = nh0 <= 500 ? ns0 : 3 * ns0 / 2;                                                                       \
  nwr = nwr > 2 ? nwr : 2;                                                                                            \
  nwr = nwr < nh0 ? nwr : nh0;                                                                                        \
  nwr = nwr < (n - 1) / 3 ? nwr : (n - 1) / 3;                                                                        \
  int64_t nsr = ns0 < (n - 3) / 6 ? ns0 : (n - 3) / 6;                                                                \
  nsr = nsr < ihi - ilo ? nsr : ihi - ilo;                                                                            \
  nsr -= nsr % 2;                                                                                                     \
  nsr = nsr > 2 ? nsr : 2;                                                                                            \
  const int kacc22 = ns0 >= 14 ? 2 : 0;                                                                               \
  /* lwork >= LAPACK's optimum (at least 3n/2 or ?laqr3's query on an nwr + 1 window, which ?gees and                 \
     ?geev pass on, each inner call getting the same lwork): the window and shift caps are n's own */                 \
  const int64_t nwmax = (n - 1) / 3;                                                                                  \
  int64_t nsmax = (n - 3) / 6;                                                                                        \
  nsmax -= nsmax % 2;                                                                                                 \
  int64_t ndfl = 1, ndec = -1, nw = nwmax;                                                                            \
  const int64_t itmax = 30 * (nh0 > 10 ? nh0 : 10);                                                                   \
  int64_t kbot = ihi;                                                                                                 \
  for (int64_t it = 1; it <= itmax; ++it) {                                                                           \
    if (kbot < ilo) return 0;                                                                                         \
    int64_t k = kbot;                                                                                                 \
    while (k > ilo && AOTC__LQ(h, ldh, k, k - 1) != (T)0) --k;                                                        \
    const int64_t ktop = k, nh = kbot - ktop + 1, nwupbd = nh < nwmax ? nh : nwmax;                                   \
    /* the deflation window: nwr, doubled while nothing deflates, then shrinking (ndec) */                            \
    if (ndfl < kexnw) nw = nwupbd < nwr ? nwupbd : nwr;                                                               \
    else nw = nwupbd < 2 * nw ? nwupbd : 2 * nw;                                                                      \
    if (nw < nwmax) {                                                                                                 \
      if (nw >= nh - 1) {                                                                                             \
        nw = nh;                                                                                                      \
      } else {                                                                                                        \
        const int64_t kwtop = kbot - nw + 1;                                                                          \
        if (P##_fabs(AOTC__LQ(h, ldh, kwtop, kwtop - 1)) > P##_fabs(AOTC__LQ(h, ldh, kwtop - 1, kwtop - 2))) ++nw;    \
      }                                                                                                               \
    }                                                                                                                 \
    if (ndfl < kexnw) {                                                                                               \
      ndec = -1;                                                                                                      \
    } else if (ndec >= 0 || nw >= nwupbd) {                                                                           \
      ++ndec;                                                                                                         \
      if (nw - ndec < 2) ndec = 0;                                                                                    \
      nw -= ndec;                                                                                                     \
    }                                                                                                                 \
    int64_t ls, ld;                                                                                                   \
    P##_rs_laqr23(rec, n, ktop, kbot, nw, h, ldh, iloz, ihiz, z, ldz, &ls, &ld, wr, wi, work);                        \
    kbot -= ld;                                                                                                       \
    int64_t ks = kbot - ls + 1;                                                                                       \
    if (ld == 0 || (100 * ld <= nw * nibble && kbot - ktop + 1 > (nmin < nwmax ? nmin : nwmax))) {                    \
      int64_t ns = kbot - ktop > 2 ? kbot - ktop : 2; /* a sweep */                                                   \
      ns = ns < nsr ? ns : nsr;                                                                                       \
      ns = ns < nsmax ? ns : nsmax;                                                                                   \
      ns -= ns % 2;                                                                                                   \
      if (ndfl % kexsh == 0) { /* exceptional shifts */                                                               \
        ks = kbot - ns + 1;                                                                                           \
        for (int64_t i = kbot; i >= (ks + 1 > ktop + 2 ? ks + 1 : ktop + 2); i -= 2) {                                \
          const T ss = P##_fabs(AOTC__LQ(h, ldh, i, i - 1)) + P##_fabs(AOTC__LQ(h, ldh, i - 1, i - 2));               \
          T aa = wilk1 * ss + AOTC__LQ(h, ldh, i, i), bb = ss, cc = wilk2 * ss, dd = aa, cs, sn;                      \
          P##_rs_lanv2(&aa, &bb, &cc, &dd, &wr[i - 1], &wi[i - 1], &wr[i], &wi[i], &cs, &sn);                         \
        }                                                                                                             \
        if (ks == ktop) {                                                                                             \
          wr[ks + 1] = AOTC__LQ(h, ldh, ks + 1, ks + 1);                                                              \
          wi[ks + 1] = (T)0;                                                                                          \
          wr[ks] = wr[ks + 1];                                                                                        \
          wi[ks] = wi[ks + 1];                                                                                        \
        }                                                                                                             \
      } else {                                                                                                        \
        if (kbot - ks + 1 <= ns / 2) { /* too few from the window: the trailing ns x ns block's eigenvalues */        \
          ks = kbot - ns + 1;                                                                                         \
          T* hs = work;                                                                                               \
          for (int64_t i = 0; i < ns; ++i)                                                                            \
            for (int64_t j = 0; j < ns; ++j) AOTC__LQ(hs, ns, i, j) = AOTC__LQ(h, ldh, ks + i, ks + j);               \
          int32_t inf;                                                                                                \
          if (rec && ns > nmin)                                                                                       \
            inf = P##_rs_laqr04(0, ns, 0, ns - 1, hs, ns, wr + ks, wi + ks, 0, 0, NULL, 1, hs + ns * ns);             \
          else                                                                                                        \
            inf = P##_rs_lahqr(ns, hs, NULL, wr + ks, wi + ks);                                                       \
          ks += inf;                                                                                                  \
          if (ks >= kbot) { /* nothing converged: the bottom 2 x 2's */                                               \
            T aa = AOTC__LQ(h, ldh, kbot - 1, kbot - 1), cc = AOTC__LQ(h, ldh, kbot, kbot - 1);                       \
            T bb = AOTC__LQ(h, ldh, kbot - 1, kbot), dd = AOTC__LQ(h, ldh, kbot, kbot), cs, sn;                       \
            P##_rs_lanv2(&aa, &bb, &cc, &dd, &wr[kbot - 1], &wi[kbot - 1], &wr[kbot], &wi[kbot], &cs, &sn);           \
            ks = kbot - 1;                                                                                            \
          }                                                                                                           \
        }                                                                                                             \
        if (kbot - ks + 1 > ns) { /* more than ns: the largest first (bubble sort by |re| + |im|) */                  \
          int sorted = 0;                                                                                             \
          for (int64_t kk = kbot; kk >= ks + 1 && !sorted; --kk) {                                                    \
            sorted = 1;                                                                                               \
            for (int64_t i = ks; i < kk; ++i)                                                                         \
              if (P##_fabs(wr[i]) + P##_fabs(wi[i]) < P##_fabs(wr[i + 1]) + P##_fabs(wi[i + 1])) {                    \
                sorted = 0;                                                                                           \
                T sw = wr[i]; wr[i] = wr[i + 1]; wr[i + 1] = sw;                                                      \
                sw = wi[i]; wi[i] = wi[i + 1]; wi[i + 1] = sw;                                                        \
              }                                                                                                       \
          }                                                                                                           \
        }                                                                                                             \
        for (int64_t i = kbot; i >= ks + 2; i -= 2) /* pairs kept together: a split one rolled down */                \
          if (wi[i] != -wi[i - 1]) {                                                                                  \
            T sw = wr[i]; wr[i] = wr[i - 1]; wr[i - 1] = wr[i - 2]; wr[i - 2] = sw;                                   \
            sw = wi[i]; wi[i] = wi[i - 1]; wi[i - 1] = wi[i - 2]; wi[i - 2] = sw;                                     \
          }                                                                                                           \
      }                                                                                                               \
      if (kbot - ks + 1 == 2 && wi[kbot] == (T)0) { /* two real shifts: the one closer to h(kbot, kbot) twice */      \
        const T hkk = AOTC__LQ(h, ldh, kbot, kbot);                                                                   \
        if (P##_fabs(wr[kbot] - hkk) < P##_fabs(wr[kbot - 1] - hkk))                                                  \
          wr[kbot - 1] = wr[kbot];                                                                                    \
        else                                                                                                          \
          wr[kbot] = wr[kbot - 1];                                                                                    \
      }                                                                                                               \
      ns = ns < kbot - ks + 1 ? ns : kbot - ks + 1;                                                                   \
      ns -= ns % 2;                                                                                                   \
      ks = kbot - ns + 1;                                                                                             \
      P##_rs_laqr5(kacc22, n, ktop, kbot, ns, wr + ks, wi + ks, h, ldh, iloz, ihiz, z, ldz, work);                    \
    }                                                                                                                 \
    ndfl = ld > 0 ? 1 : ndfl + 1;                                                                                     \
  }                                                                                                                   \
  return (int32_t)(kbot + 1);                                                                                         \
}                                                                                                                     \
                                                                                                                      \
/* ?hseqr with job 'S', compz 'V' on the n x n h (row-major, gebal's ilo..ihi 0-based), z accumulating:               \
   eigenvalues outside ilo..ihi off the diagonal; n > 75: ?laqr0; else ?lahqr on the whole matrix, as                 \
   before, and ?hseqr's rescue when it fails (?laqr0 on rows ilo..info, on a zero-padded 49 x 49 copy when            \
   n < 49).  Below the subdiagonal h is zero on return.  Returns LAPACK's info.  work: AOTC_LA_LAQR_WORK(n). */       \
AOTC_INLINE int32_t P##_rs_hseqr(int64_t n, int64_t ilo, int64_t ihi, T* h, T* z, T* wr, T* wi, T* work) {            \
  if (n <= 0) return 0;                                                                                               \
  for (int64_t i = 0; i < n; ++i)                                                                                     \
    if (i < ilo || i > ihi) { wr[i] = AOTC__LQ(h, n, i, i); wi[i] = (T)0; }                                           \
  if (ilo == ihi) {                                                                                                   \
    wr[ilo] = AOTC__LQ(h, n, ilo, ilo);                                                                               \
    wi[ilo] = (T)0;                                                                                                   \
    return 0;                                                                                                         \
  }                                                                                                                   \
  int32_t info;                                                                                                       \
  if (n > 75) {                                                                                                       \
    info = P##_rs_laqr04(1, n, ilo, ihi, h, n, wr, wi, ilo, ihi, z, n, work);                                         \
  } else {                                                                                                            \
    info = P##_rs_lahqr(n, h, z, wr, wi);                                                                             \
    if (info > 0) {                                                                                                   \
      const int64_t kbot = info - 1, nl = 49;                                                                         \
      if (n >= nl) {                                                                                                  \
        info = P##_rs_laqr04(1, n, ilo, kbot, h, n, wr, wi, ilo, ihi, z, n, work);                                    \
      } else {                                                                                                        \
        T* hl = work;                                                                                                 \
        memset(hl, 0, (size_t)(nl * nl) * sizeof(T));                                                                 \
        for (int64_t i = 0; i < n; ++i) memcpy(hl + i * nl, h + i * n, (size_t)n * sizeof(T));                        \
        info = P##_rs_laqr04(1, nl, ilo, kbot, hl, nl, wr, wi, ilo, ihi, z, n, hl + nl * nl);                         \
        for (int64_t i = 0; i < n; ++i) memcpy(h + i * n, hl + i * nl, (size_t)n * sizeof(T));                        \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
  for (int64_t i = 2; i < n; ++i)                                                                                     \
    for (int64_t j = 0; j + 2 <= i; ++j) AOTC__LQ(h, n, i, j) = (T)0;                                                 \
  return info;                                                                                                        \
}
#endif
