/* aotc_laqr5_c.c -- one small-bulge multishift QR sweep on a complex upper Hessenberg matrix, as
 * LAPACK's zlaqr5 (3.12, as OpenBLAS 0.3.30 ships it): ns shifts make ns/2 bulges, introduced at the
 * top of the active block and chased down together, with its refined deflation test during the
 * chase; the reflections applied directly (KACC22 0) or accumulated per segment in U and applied to
 * the rest of H and Z by products (k-ordered sums here, zgemm's in LAPACK).  Part of aotc_laqr_c.c
 * (AOTC__LA_LAQR_CPLX), whose conventions it shares: row-major storage read through Fortran's 1-based
 * indices (AOTC__LQ_H(i, j) is H(i, j)).
 */
#ifndef AOTC_LAQR5_C_C
#define AOTC_LAQR5_C_C 1 /* the guard of aotc_laqr_c.c's #include of this file */
#include <stdint.h>

#define AOTC__LA_LAQR5_CPLX(P, T, R)                                                                                  \
/* The deflation check of ?laqr5 on H(k+1, k), ktop <= k. */                                                          \
AOTC_INLINE void P##_lq_defl(T* h, int64_t ldh, int64_t k, int64_t ktop, int64_t kbot, R smlnum, R ulp) {             \
  if (P##_iszero(AOTC__LQ_H(k + 1, k))) return;                                                                       \
  R tst1 = P##_abs1(AOTC__LQ_H(k, k)) + P##_abs1(AOTC__LQ_H(k + 1, k + 1));                                           \
  if (tst1 == (R)0) {                                                                                                 \
    if (k >= ktop + 1) tst1 += P##_abs1(AOTC__LQ_H(k, k - 1));                                                        \
    if (k >= ktop + 2) tst1 += P##_abs1(AOTC__LQ_H(k, k - 2));                                                        \
    if (k >= ktop + 3) tst1 += P##_abs1(AOTC__LQ_H(k, k - 3));                                                        \
    if (k <= kbot - 2) tst1 += P##_abs1(AOTC__LQ_H(k + 2, k + 1));                                                    \
    if (k <= kbot - 3) tst1 += P##_abs1(AOTC__LQ_H(k + 3, k + 1));                                                    \
    if (k <= kbot - 4) tst1 += P##_abs1(AOTC__LQ_H(k + 4, k + 1));                                                    \
  }                                                                                                                   \
  const R sub = P##_abs1(AOTC__LQ_H(k + 1, k)), sup = P##_abs1(AOTC__LQ_H(k, k + 1));                                 \
  if (sub > (smlnum > ulp * tst1 ? smlnum : ulp * tst1)) return;                                                      \
  const R d1 = P##_abs1(AOTC__LQ_H(k + 1, k + 1));                                                                    \
  const R d2 = P##_abs1(P##_sub(AOTC__LQ_H(k, k), AOTC__LQ_H(k + 1, k + 1)));                                         \
  const R h12 = sub > sup ? sub : sup, h21 = sub < sup ? sub : sup;                                                   \
  const R h11 = d1 > d2 ? d1 : d2, h22 = d1 < d2 ? d1 : d2;                                                           \
  const R scl = h11 + h12, tst2 = h22 * (h11 / scl);                                                                  \
  if (tst2 == (R)0 || h21 * (h12 / scl) <= (smlnum > ulp * tst2 ? smlnum : ulp * tst2))                               \
    AOTC__LQ_H(k + 1, k) = P##_mk((R)0, (R)0);                                                                        \
}                                                                                                                     \
/* x := x - sum (x H(k+1..k+nv)) applied as LAPACK writes it: the 2- or 3-vector reflector (tau = vv[0], the vector   \
   1, vv[1], ...) from the right on rows (`right`) of a matrix x (stride sr between rows, sc along one). */           \
AOTC_INLINE void P##_lq_refl(int right, int nv, const T* vv, int64_t r0, int64_t r1, T* x, int64_t sr, int64_t sc) {  \
  const T t1 = right ? vv[0] : P##_conj(vv[0]);                                                                       \
  const T t2 = P##_mul(t1, right ? P##_conj(vv[1]) : vv[1]);                                                          \
  const T t3 = nv == 3 ? P##_mul(t1, right ? P##_conj(vv[2]) : vv[2]) : t1;                                           \
  const T v2 = right ? vv[1] : P##_conj(vv[1]), v3 = nv == 3 ? (right ? vv[2] : P##_conj(vv[2])) : vv[0];             \
  for (int64_t j = r0; j <= r1; ++j) {                                                                                \
    T* x1 = x + j * sr;                                                                                               \
    T refsum = P##_add(x1[0], P##_mul(v2, x1[sc]));                                                                   \
    if (nv == 3) refsum = P##_add(refsum, P##_mul(v3, x1[2 * sc]));                                                   \
    x1[0] = P##_sub(x1[0], P##_mul(refsum, t1));                                                                      \
    x1[sc] = P##_sub(x1[sc], P##_mul(refsum, t2));                                                                    \
    if (nv == 3) x1[2 * sc] = P##_sub(x1[2 * sc], P##_mul(refsum, t3));                                               \
  }                                                                                                                   \
}                                                                                                                     \
/* ?laqr5: one multishift QR sweep over the active block ktop..kbot (1-based) of h, nshfts shifts s[0..) chased as    \
   packed 3 x 3 bulges (and a 2 x 2 one at the bottom); with kacc22 1 or 2 the reflections of each group of columns   \
   accumulated in u (kdu x kdu) and applied to the rest of h and z by products.  work: see the header. */             \
AOTC_INLINE void P##_lq_sweep(int kacc22, int64_t n, int64_t ktop, int64_t kbot, int64_t nshfts, const T* s, T* h,    \
                              int64_t ldh, int64_t iloz, int64_t ihiz, T* z, int64_t ldz, T* work) {                  \
  const T zero = P##_mk((R)0, (R)0);                                                                                  \
  if (nshfts < 2 || ktop >= kbot) return;                                                                             \
  const int64_t ns = nshfts - nshfts % 2, nbmps = ns / 2, kdu = 4 * nbmps, ldu = kdu, ldv = nbmps;                    \
  const R ulp = P##_eps(), smlnum = P##_sfmin() * ((R)n / ulp);                                                       \
  const int accum = kacc22 == 1 || kacc22 == 2;                                                                       \
  T* v = work;                                                                                                        \
  T* u = v + 3 * nbmps;                                                                                               \
  T* wk = u + kdu * kdu;                                                                                              \
  if (ktop + 2 <= kbot) AOTC__LQ_H(ktop + 2, ktop) = zero;                                                            \
  for (int64_t incol = ktop - 2 * nbmps + 1; incol <= kbot - 2; incol += 2 * nbmps) {                                 \
    const int64_t jtop = accum ? (ktop > incol ? ktop : incol) : 1, ndcol = incol + kdu;                              \
    const int64_t jbot = accum ? (ndcol < kbot ? ndcol : kbot) : n;                                                   \
    if (accum)                                                                                                        \
      for (int64_t i = 1; i <= kdu; ++i)                                                                              \
        for (int64_t j = 1; j <= kdu; ++j) AOTC__LQ_U(i, j) = P##_mk((R)(i == j), (R)0);                              \
    const int64_t klast = incol + 2 * nbmps - 1 < kbot - 2 ? incol + 2 * nbmps - 1 : kbot - 2;                        \
    for (int64_t krcol = incol; krcol <= klast; ++krcol) {                                                            \
      const int64_t mtop = (ktop - krcol) / 2 + 1 > 1 ? (ktop - krcol) / 2 + 1 : 1;                                   \
      const int64_t mbot = nbmps < (kbot - krcol - 1) / 2 ? nbmps : (kbot - krcol - 1) / 2, m22 = mbot + 1;           \
      T vv[3];                                                                                                        \
      if (mbot < nbmps && krcol + 2 * (m22 - 1) == kbot - 2) { /* the 2 x 2 bulge at the bottom */                    \
        const int64_t k = krcol + 2 * (m22 - 1);                                                                      \
        T beta;                                                                                                       \
        if (k == ktop - 1) {                                                                                          \
          P##_lq_laqr1(2, &AOTC__LQ_H(k + 1, k + 1), ldh, s[2 * m22 - 2], s[2 * m22 - 1], vv);                        \
          beta = vv[0];                                                                                               \
          vv[0] = P##_lq_larfg(2, &beta, vv + 1);                                                                     \
        } else {                                                                                                      \
          beta = AOTC__LQ_H(k + 1, k);                                                                                \
          vv[1] = AOTC__LQ_H(k + 2, k);                                                                               \
          vv[0] = P##_lq_larfg(2, &beta, vv + 1);                                                                     \
          AOTC__LQ_H(k + 1, k) = beta;                                                                                \
          AOTC__LQ_H(k + 2, k) = zero;                                                                                \
        }                                                                                                             \
        AOTC__LQ_V(1, m22) = vv[0];                                                                                   \
        AOTC__LQ_V(2, m22) = vv[1];                                                                                   \
        P##_lq_refl(1, 2, vv, jtop - 1, (kbot < k + 3 ? kbot : k + 3) - 1, &AOTC__LQ_H(1, k + 1), ldh, 1);            \
        P##_lq_refl(0, 2, vv, k, jbot - 1, &AOTC__LQ_H(k + 1, 1), 1, ldh);                                            \
        if (k >= ktop) P##_lq_defl(h, ldh, k, ktop, kbot, smlnum, ulp);                                               \
        const int64_t kms = k - incol, jlo = accum ? (ktop - incol > 1 ? ktop - incol : 1) : iloz;                    \
        const int64_t jhi = accum ? kdu : ihiz;                                                                       \
        T* x = accum ? &AOTC__LQ_U(1, kms + 1) : &AOTC__LQ_Z(1, k + 1);                                               \
        const int64_t ldx = accum ? ldu : ldz;                                                                        \
        const T cv2 = P##_conj(vv[1]);                                                                                \
        for (int64_t j = jlo; j <= jhi; ++j) {                                                                        \
          T* x1 = x + (j - 1) * ldx;                                                                                  \
          T refsum = P##_mul(vv[0], P##_add(x1[0], P##_mul(vv[1], x1[1])));                                           \
          x1[0] = P##_sub(x1[0], refsum);                                                                             \
          x1[1] = P##_sub(x1[1], P##_mul(refsum, cv2));                                                               \
        }                                                                                                             \
      }                                                                                                               \
      for (int64_t m = mbot; m >= mtop; --m) { /* the 3 x 3 bulges, bottom one first */                               \
        const int64_t k = krcol + 2 * (m - 1);                                                                        \
        if (k == ktop - 1) {                                                                                          \
          P##_lq_laqr1(3, &AOTC__LQ_H(ktop, ktop), ldh, s[2 * m - 2], s[2 * m - 1], vv);                              \
          T alpha = vv[0];                                                                                            \
          vv[0] = P##_lq_larfg(3, &alpha, vv + 1);                                                                    \
        } else {                                                                                                      \
          const T t1 = AOTC__LQ_V(1, m), t2 = P##_mul(t1, P##_conj(AOTC__LQ_V(2, m)));                                \
          const T t3 = P##_mul(t1, P##_conj(AOTC__LQ_V(3, m)));                                                       \
          T refsum = P##_mul(AOTC__LQ_V(3, m), AOTC__LQ_H(k + 3, k + 2));                                             \
          AOTC__LQ_H(k + 3, k) = P##_lq_neg(P##_mul(refsum, t1));                                                     \
          AOTC__LQ_H(k + 3, k + 1) = P##_lq_neg(P##_mul(refsum, t2));                                                 \
          AOTC__LQ_H(k + 3, k + 2) = P##_sub(AOTC__LQ_H(k + 3, k + 2), P##_mul(refsum, t3));                          \
          T beta = AOTC__LQ_H(k + 1, k);                                                                              \
          vv[1] = AOTC__LQ_H(k + 2, k);                                                                               \
          vv[2] = AOTC__LQ_H(k + 3, k);                                                                               \
          vv[0] = P##_lq_larfg(3, &beta, vv + 1);                                                                     \
          if (!P##_iszero(AOTC__LQ_H(k + 3, k)) || !P##_iszero(AOTC__LQ_H(k + 3, k + 1)) ||                           \
              P##_iszero(AOTC__LQ_H(k + 3, k + 2))) {                                                                 \
            AOTC__LQ_H(k + 1, k) = beta;                                                                              \
          } else { /* a bulge that collapsed: try a fresh one from the same shifts */                                 \
            T vt[3];                                                                                                  \
            P##_lq_laqr1(3, &AOTC__LQ_H(k + 1, k + 1), ldh, s[2 * m - 2], s[2 * m - 1], vt);                          \
            T alpha = vt[0];                                                                                          \
            vt[0] = P##_lq_larfg(3, &alpha, vt + 1);                                                                  \
            const T u1 = P##_conj(vt[0]), u2 = P##_mul(u1, vt[1]), u3 = P##_mul(u1, vt[2]);                           \
            refsum = P##_add(AOTC__LQ_H(k + 1, k), P##_mul(P##_conj(vt[1]), AOTC__LQ_H(k + 2, k)));                   \
            const R lhs =                                                                                             \
                P##_abs1(P##_sub(AOTC__LQ_H(k + 2, k), P##_mul(refsum, u2))) + P##_abs1(P##_mul(refsum, u3));         \
            if (lhs > ulp * (P##_abs1(AOTC__LQ_H(k, k)) + P##_abs1(AOTC__LQ_H(k + 1, k + 1)) +                        \
                             P##_abs1(AOTC__LQ_H(k + 2, k + 2)))) {                                                   \
              AOTC__LQ_H(k + 1, k) = beta;                                                                            \
            } else {                                                                                                  \
              AOTC__LQ_H(k + 1, k) = P##_sub(AOTC__LQ_H(k + 1, k), P##_mul(refsum, u1));                              \
              vv[0] = vt[0];                                                                                          \
              vv[1] = vt[1];                                                                                          \
              vv[2] = vt[2];                                                                                          \
            }                                                                                                         \
          }                                                                                                           \
          AOTC__LQ_H(k + 2, k) = zero;                                                                                \
          AOTC__LQ_H(k + 3, k) = zero;                                                                                \
        }                                                                                                             \
        AOTC__LQ_V(1, m) = vv[0];                                                                                     \
        AOTC__LQ_V(2, m) = vv[1];                                                                                     \
        AOTC__LQ_V(3, m) = vv[2];                                                                                     \
        P##_lq_refl(1, 3, vv, jtop - 1, (kbot < k + 3 ? kbot : k + 3) - 1, &AOTC__LQ_H(1, k + 1), ldh, 1);            \
        P##_lq_refl(0, 3, vv, k, k, &AOTC__LQ_H(k + 1, 1), 1, ldh);                                                   \
        if (k >= ktop) P##_lq_defl(h, ldh, k, ktop, kbot, smlnum, ulp);                                               \
      }                                                                                                               \
      for (int64_t m = mbot; m >= mtop; --m) {                                                                        \
        const int64_t k = krcol + 2 * (m - 1), j0 = ktop > krcol + 2 * m ? ktop : krcol + 2 * m;                      \
        for (int i = 0; i < 3; ++i) vv[i] = AOTC__LQ_V(i + 1, m);                                                     \
        P##_lq_refl(0, 3, vv, j0 - 1, jbot - 1, &AOTC__LQ_H(k + 1, 1), 1, ldh);                                       \
      }                                                                                                               \
      for (int64_t m = mbot; m >= mtop; --m) {                                                                        \
        const int64_t k = krcol + 2 * (m - 1), kms = k - incol;                                                       \
        for (int i = 0; i < 3; ++i) vv[i] = AOTC__LQ_V(i + 1, m);                                                     \
        if (accum) {                                                                                                  \
          int64_t i2 = ktop - incol > 1 ? ktop - incol : 1;                                                           \
          i2 = i2 > kms - (krcol - incol) + 1 ? i2 : kms - (krcol - incol) + 1;                                       \
          const int64_t i4 = kdu < krcol + 2 * (mbot - 1) - incol + 5 ? kdu : krcol + 2 * (mbot - 1) - incol + 5;     \
          P##_lq_refl(1, 3, vv, i2 - 1, i4 - 1, &AOTC__LQ_U(1, kms + 1), ldu, 1);                                     \
        } else {                                                                                                      \
          P##_lq_refl(1, 3, vv, iloz - 1, ihiz - 1, &AOTC__LQ_Z(1, k + 1), ldz, 1);                                   \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
    if (accum) { /* the rest of h and z times u: plain products (?gemm with beta 0) */                                \
      const int64_t k1 = ktop - incol > 1 ? ktop - incol : 1;                                                         \
      const int64_t nu = (kdu - (ndcol - kbot > 0 ? ndcol - kbot : 0)) - k1 + 1, r1 = ktop > incol ? ktop : incol;    \
      const int64_t c0 = (ndcol < kbot ? ndcol : kbot) + 1;                                                           \
      const T* uk = &AOTC__LQ_U(k1, k1);                                                                              \
      if (c0 <= n) P##_lq_mulu(1, n - c0 + 1, nu, &AOTC__LQ_H(incol + k1, c0), 1, ldh, uk, ldu, 1, wk);               \
      P##_lq_mulu(0, r1 - 1, nu, &AOTC__LQ_H(1, incol + k1), ldh, 1, uk, ldu, 1, wk);                                 \
      P##_lq_mulu(0, ihiz - iloz + 1, nu, &AOTC__LQ_Z(iloz, incol + k1), ldz, 1, uk, ldu, 1, wk);                     \
    }                                                                                                                 \
  }                                                                                                                   \
}

#endif
