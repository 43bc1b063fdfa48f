/* aotc_laqr5.c -- one small-bulge multishift QR sweep on a real upper Hessenberg matrix, as LAPACK's
 * ?laqr5 (3.12, as OpenBLAS 0.3.30 ships it) with ?laqr1: ns shifts (pairs of real shifts or complex
 * conjugates) make ns/2 3 x 3 bulges, introduced at the top of the active block ktop..kbot and chased
 * down together two columns at a time, with ?laqr5's refined tests: a bulge that collapsed is
 * reintroduced from its shifts when that is no less accurate, and a subdiagonal entry found negligible
 * during the chase is set to zero (the Ahues-Kressner test).  KACC22 0 applies each reflection to all of
 * H and Z directly; KACC22 1 or 2 accumulates a segment's reflections in the (4 ns/2)-square U and
 * applies it to the rest of H and Z by products (plain k-order sums here, ?gemm's in LAPACK).  Part of
 * aotc_laqr.c (AOTC__LA_LAQR_REAL), which documents the conventions: row-major, 0-based, always wantt,
 * wantz unless z is NULL.
 */
#ifndef AOTC_LAQR5_C
#define AOTC_LAQR5_C 1 /* the guard of aotc_laqr.c's #include of this file */
#include <stdint.h>

#define AOTC__LA_LAQR5_REAL(P, T)                                                                                     \
/* A multiple of (H - s1 I)(H - s2 I) e_1 for the leading 2 x 2 or 3 x 3 (m) block of h, with shifts                  \
   s1 = sr1 + i si1, s2 = sr2 + i si2 real or a conjugate pair (?laqr1) */                                            \
AOTC_INLINE void P##_lq_laqr1(int m, const T* h, int64_t ldh, T sr1, T si1, T sr2, T si2, T* v) {                     \
  const T h11 = AOTC__LQ(h, ldh, 0, 0), h21 = AOTC__LQ(h, ldh, 1, 0);                                                 \
  if (m == 2) {                                                                                                       \
    const T s = P##_fabs(h11 - sr2) + P##_fabs(si2) + P##_fabs(h21);                                                  \
    if (s == (T)0) { v[0] = v[1] = (T)0; return; }                                                                    \
    const T h21s = h21 / s;                                                                                           \
    v[0] = h21s * AOTC__LQ(h, ldh, 0, 1) + (h11 - sr1) * ((h11 - sr2) / s) - si1 * (si2 / s);                         \
    v[1] = h21s * (h11 + AOTC__LQ(h, ldh, 1, 1) - sr1 - sr2);                                                         \
    return;                                                                                                           \
  }                                                                                                                   \
  const T h31 = AOTC__LQ(h, ldh, 2, 0);                                                                               \
  const T s = P##_fabs(h11 - sr2) + P##_fabs(si2) + P##_fabs(h21) + P##_fabs(h31);                                    \
  if (s == (T)0) { v[0] = v[1] = v[2] = (T)0; return; }                                                               \
  const T h21s = h21 / s, h31s = h31 / s;                                                                             \
  v[0] = (h11 - sr1) * ((h11 - sr2) / s) - si1 * (si2 / s) + AOTC__LQ(h, ldh, 0, 1) * h21s                            \
         + AOTC__LQ(h, ldh, 0, 2) * h31s;                                                                             \
  v[1] = h21s * (h11 + AOTC__LQ(h, ldh, 1, 1) - sr1 - sr2) + AOTC__LQ(h, ldh, 1, 2) * h31s;                           \
  v[2] = h31s * (h11 + AOTC__LQ(h, ldh, 2, 2) - sr1 - sr2) + h21s * AOTC__LQ(h, ldh, 2, 1);                           \
}                                                                                                                     \
                                                                                                                      \
/* ?laqr5's test of the subdiagonal entry h(k+1, k) during the chase: zeroed when negligible */                       \
AOTC_INLINE void P##_lq_chase_defl(T* h, int64_t ldh, int64_t k, int64_t ktop, int64_t kbot, T smlnum, T ulp) {       \
  if (AOTC__LQ(h, ldh, k + 1, k) == (T)0) return;                                                                     \
  T tst1 = P##_fabs(AOTC__LQ(h, ldh, k, k)) + P##_fabs(AOTC__LQ(h, ldh, k + 1, k + 1));                               \
  if (tst1 == (T)0) {                                                                                                 \
    if (k >= ktop + 1) tst1 += P##_fabs(AOTC__LQ(h, ldh, k, k - 1));                                                  \
    if (k >= ktop + 2) tst1 += P##_fabs(AOTC__LQ(h, ldh, k, k - 2));                                                  \
    if (k >= ktop + 3) tst1 += P##_fabs(AOTC__LQ(h, ldh, k, k - 3));                                                  \
    if (k <= kbot - 2) tst1 += P##_fabs(AOTC__LQ(h, ldh, k + 2, k + 1));                                              \
    if (k <= kbot - 3) tst1 += P##_fabs(AOTC__LQ(h, ldh, k + 3, k + 1));                                              \
    if (k <= kbot - 4) tst1 += P##_fabs(AOTC__LQ(h, ldh, k + 4, k + 1));                                              \
  }                                                                                                                   \
  if (P##_fabs(AOTC__LQ(h, ldh, k + 1, k)) > P##_rs_max(smlnum, ulp * tst1)) return;                                  \
  const T hk1k = P##_fabs(AOTC__LQ(h, ldh, k + 1, k)), hkk1 = P##_fabs(AOTC__LQ(h, ldh, k, k + 1));                   \
  const T hk1 = P##_fabs(AOTC__LQ(h, ldh, k + 1, k + 1));                                                             \
  const T dif = P##_fabs(AOTC__LQ(h, ldh, k, k) - AOTC__LQ(h, ldh, k + 1, k + 1));                                    \
  const T h12 = P##_rs_max(hk1k, hkk1), h21 = P##_rs_min(hk1k, hkk1);                                                 \
  const T h11 = P##_rs_max(hk1, dif), h22 = P##_rs_min(hk1, dif);                                                     \
  const T scl = h11 + h12, tst2 = h22 * (h11 / scl);                                                                  \
  if (tst2 == (T)0 || h21 * (h12 / scl) <= P##_rs_max(smlnum, ulp * tst2)) AOTC__LQ(h, ldh, k + 1, k) = (T)0;         \
}                                                                                                                     \
                                                                                                                      \
/* x's columns c..c+nr-1 (nr 2 or 3), rows r0..r1, times (I - t1 v v^T) with v = (1, v2, v3) */                       \
AOTC_INLINE void P##_lq_refl_cols(T* x, int64_t ld, int64_t r0, int64_t r1, int64_t c, int nr, const T* v) {          \
  const T t1 = v[0], t2 = t1 * v[1], t3 = nr == 3 ? t1 * v[2] : (T)0;                                                 \
  for (int64_t j = r0; j <= r1; ++j) {                                                                                \
    T* a = &AOTC__LQ(x, ld, j, c);                                                                                    \
    T refsum = a[0] + v[1] * a[1];                                                                                    \
    if (nr == 3) refsum += v[2] * a[2];                                                                               \
    a[0] -= refsum * t1;                                                                                              \
    a[1] -= refsum * t2;                                                                                              \
    if (nr == 3) a[2] -= refsum * t3;                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* (I - t1 v v^T) times h's rows r..r+nr-1, columns c0..c1 */                                                         \
AOTC_INLINE void P##_lq_refl_rows(T* h, int64_t ldh, int64_t r, int nr, int64_t c0, int64_t c1, const T* v) {         \
  const T t1 = v[0], t2 = t1 * v[1], t3 = nr == 3 ? t1 * v[2] : (T)0;                                                 \
  for (int64_t j = c0; j <= c1; ++j) {                                                                                \
    T refsum = AOTC__LQ(h, ldh, r, j) + v[1] * AOTC__LQ(h, ldh, r + 1, j);                                            \
    if (nr == 3) refsum += v[2] * AOTC__LQ(h, ldh, r + 2, j);                                                         \
    AOTC__LQ(h, ldh, r, j) -= refsum * t1;                                                                            \
    AOTC__LQ(h, ldh, r + 1, j) -= refsum * t2;                                                                        \
    if (nr == 3) AOTC__LQ(h, ldh, r + 2, j) -= refsum * t3;                                                           \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* One sweep of nshfts shifts sr/si over the active block ktop..kbot of the n x n h (?laqr5 with wantt;               \
   z's rows iloz..ihiz accumulating, NULL: none).  work: (2 nshfts)^2 + 4 nshfts. */                                  \
AOTC_INLINE void P##_rs_laqr5(int kacc22, int64_t n, int64_t ktop, int64_t kbot, int64_t nshfts, T* sr, T* si, T* h,  \
                              int64_t ldh, int64_t iloz, int64_t ihiz, T* z, int64_t ldz, T* work) {                  \
  if (nshfts < 2 || ktop >= kbot) return;                                                                             \
  for (int64_t i = 0; i + 2 < nshfts; i += 2) /* a pair split by a real shift: roll it down */                        \
    if (si[i] != -si[i + 1]) {                                                                                        \
      T sw = sr[i]; sr[i] = sr[i + 1]; sr[i + 1] = sr[i + 2]; sr[i + 2] = sw;                                         \
      sw = si[i]; si[i] = si[i + 1]; si[i + 1] = si[i + 2]; si[i + 2] = sw;                                           \
    }                                                                                                                 \
  const int64_t ns = nshfts - nshfts % 2, nbmps = ns / 2, kdu = 4 * nbmps;                                            \
  const T safmin = P##_sfmin(), ulp = P##_eps(), smlnum = safmin * ((T)n / ulp);                                      \
  const int accum = kacc22 == 1 || kacc22 == 2;                                                                       \
  T* vv = work;            /* the bulges' reflectors: (tau, v2, v3) for bulge m at vv[3(m-1)] */                      \
  T* u = vv + 3 * nbmps;   /* kdu x kdu */                                                                            \
  T* tmp = u + kdu * kdu;  /* a row or column of a product */                                                         \
  if (ktop + 2 <= kbot) AOTC__LQ(h, ldh, ktop + 2, ktop) = (T)0;                                                      \
  for (int64_t incol = ktop - 2 * nbmps + 1; incol <= kbot - 2; incol += 2 * nbmps) {                                 \
    const int64_t jtop = accum ? (ktop > incol ? ktop : incol) : 0;                                                   \
    const int64_t ndcol = incol + kdu;                                                                                \
    const int64_t jbot = accum ? (ndcol < kbot ? ndcol : kbot) : n - 1;                                               \
    if (accum) {                                                                                                      \
      for (int64_t i = 0; i < kdu * kdu; ++i) u[i] = (T)0;                                                            \
      for (int64_t i = 0; i < kdu; ++i) AOTC__LQ(u, kdu, i, i) = (T)1;                                                \
    }                                                                                                                 \
    const int64_t klast = incol + 2 * nbmps - 1 < kbot - 2 ? incol + 2 * nbmps - 1 : kbot - 2;                        \
    for (int64_t krcol = incol; krcol <= klast; ++krcol) {                                                            \
      const int64_t mtop = (ktop - krcol) / 2 + 1 > 1 ? (ktop - krcol) / 2 + 1 : 1;                                   \
      const int64_t mbot = nbmps < (kbot - krcol - 1) / 2 ? nbmps : (kbot - krcol - 1) / 2;                           \
      const int64_t m22 = mbot + 1;                                                                                   \
      if (mbot < nbmps && krcol + 2 * (m22 - 1) == kbot - 2) { /* a 2 x 2 reflection at the bottom */                 \
        const int64_t k = krcol + 2 * (m22 - 1);                                                                      \
        T* v = vv + 3 * (m22 - 1);                                                                                    \
        if (k == ktop - 1) {                                                                                          \
          P##_lq_laqr1(2, &AOTC__LQ(h, ldh, k + 1, k + 1), ldh, sr[2 * m22 - 2], si[2 * m22 - 2], sr[2 * m22 - 1],    \
                       si[2 * m22 - 1], v);                                                                           \
          T beta = v[0];                                                                                              \
          v[0] = P##_rs_larfg(2, &beta, &v[1], 1);                                                                    \
        } else {                                                                                                      \
          T beta = AOTC__LQ(h, ldh, k + 1, k);                                                                        \
          v[1] = AOTC__LQ(h, ldh, k + 2, k);                                                                          \
          v[0] = P##_rs_larfg(2, &beta, &v[1], 1);                                                                    \
          AOTC__LQ(h, ldh, k + 1, k) = beta;                                                                          \
          AOTC__LQ(h, ldh, k + 2, k) = (T)0;                                                                          \
        }                                                                                                             \
        P##_lq_refl_cols(h, ldh, jtop, kbot < k + 3 ? kbot : k + 3, k + 1, 2, v);                                     \
        P##_lq_refl_rows(h, ldh, k + 1, 2, k + 1, jbot, v);                                                           \
        if (k >= ktop) P##_lq_chase_defl(h, ldh, k, ktop, kbot, smlnum, ulp);                                         \
        if (accum) {                                                                                                  \
          const int64_t kms = k - incol, j0 = ktop - incol > 1 ? ktop - incol : 1;                                    \
          P##_lq_refl_cols(u, kdu, j0 - 1, kdu - 1, kms, 2, v);                                                       \
        } else if (z) {                                                                                               \
          P##_lq_refl_cols(z, ldz, iloz, ihiz, k + 1, 2, v);                                                          \
        }                                                                                                             \
      }                                                                                                               \
      for (int64_t m = mbot; m >= mtop; --m) { /* the 3 x 3 bulges, the lowest first */                               \
        const int64_t k = krcol + 2 * (m - 1);                                                                        \
        T* v = vv + 3 * (m - 1);                                                                                      \
        if (k == ktop - 1) {                                                                                          \
          P##_lq_laqr1(3, &AOTC__LQ(h, ldh, ktop, ktop), ldh, sr[2 * m - 2], si[2 * m - 2], sr[2 * m - 1],            \
                       si[2 * m - 1], v);                                                                             \
          T alpha = v[0];                                                                                             \
          v[0] = P##_rs_larfg(3, &alpha, &v[1], 1);                                                                   \
        } else {                                                                                                      \
          const T t1 = v[0], t2 = t1 * v[1], t3 = t1 * v[2]; /* the bulge's last row, delayed */                      \
          const T refsum = v[2] * AOTC__LQ(h, ldh, k + 3, k + 2);                                                     \
          AOTC__LQ(h, ldh, k + 3, k) = -refsum * t1;                                                                  \
          AOTC__LQ(h, ldh, k + 3, k + 1) = -refsum * t2;                                                              \
          AOTC__LQ(h, ldh, k + 3, k + 2) -= refsum * t3;                                                              \
          T beta = AOTC__LQ(h, ldh, k + 1, k);                                                                        \
          v[1] = AOTC__LQ(h, ldh, k + 2, k);                                                                          \
          v[2] = AOTC__LQ(h, ldh, k + 3, k);                                                                          \
          v[0] = P##_rs_larfg(3, &beta, &v[1], 1);                                                                    \
          if (AOTC__LQ(h, ldh, k + 3, k) != (T)0 || AOTC__LQ(h, ldh, k + 3, k + 1) != (T)0 ||                         \
              AOTC__LQ(h, ldh, k + 3, k + 2) == (T)0) {                                                               \
            AOTC__LQ(h, ldh, k + 1, k) = beta;                                                                        \
            AOTC__LQ(h, ldh, k + 2, k) = (T)0;                                                                        \
            AOTC__LQ(h, ldh, k + 3, k) = (T)0;                                                                        \
          } else { /* the bulge collapsed: a fresh one from the shifts, if it is no worse */                          \
            T vt[3];                                                                                                  \
            P##_lq_laqr1(3, &AOTC__LQ(h, ldh, k + 1, k + 1), ldh, sr[2 * m - 2], si[2 * m - 2], sr[2 * m - 1],        \
                         si[2 * m - 1], vt);                                                                          \
            T alpha = vt[0];                                                                                          \
            vt[0] = P##_rs_larfg(3, &alpha, &vt[1], 1);                                                               \
            const T s1 = vt[0], s2 = s1 * vt[1], s3 = s1 * vt[2];                                                     \
            const T rs = AOTC__LQ(h, ldh, k + 1, k) + vt[1] * AOTC__LQ(h, ldh, k + 2, k);                             \
            if (P##_fabs(AOTC__LQ(h, ldh, k + 2, k) - rs * s2) + P##_fabs(rs * s3) >                                  \
                ulp * (P##_fabs(AOTC__LQ(h, ldh, k, k)) + P##_fabs(AOTC__LQ(h, ldh, k + 1, k + 1)) +                  \
                       P##_fabs(AOTC__LQ(h, ldh, k + 2, k + 2)))) {                                                   \
              AOTC__LQ(h, ldh, k + 1, k) = beta;                                                                      \
              AOTC__LQ(h, ldh, k + 2, k) = (T)0;                                                                      \
              AOTC__LQ(h, ldh, k + 3, k) = (T)0;                                                                      \
            } else {                                                                                                  \
              AOTC__LQ(h, ldh, k + 1, k) -= rs * s1;                                                                  \
              AOTC__LQ(h, ldh, k + 2, k) = (T)0;                                                                      \
              AOTC__LQ(h, ldh, k + 3, k) = (T)0;                                                                      \
              v[0] = vt[0]; v[1] = vt[1]; v[2] = vt[2];                                                               \
            }                                                                                                         \
          }                                                                                                           \
        }                                                                                                             \
        P##_lq_refl_cols(h, ldh, jtop, kbot < k + 3 ? kbot : k + 3, k + 1, 3, v);                                     \
        P##_lq_refl_rows(h, ldh, k + 1, 3, k + 1, k + 1, v); /* column k+1 now, the rest below */                     \
        if (k >= ktop) P##_lq_chase_defl(h, ldh, k, ktop, kbot, smlnum, ulp);                                         \
      }                                                                                                               \
      for (int64_t m = mbot; m >= mtop; --m) { /* the bulges' rows, from the left */                                  \
        const int64_t k = krcol + 2 * (m - 1);                                                                        \
        P##_lq_refl_rows(h, ldh, k + 1, 3, ktop > krcol + 2 * m ? ktop : krcol + 2 * m, jbot, vv + 3 * (m - 1));      \
      }                                                                                                               \
      for (int64_t m = mbot; m >= mtop; --m) { /* and into U (only its nonzero band) or z */                          \
        const int64_t k = krcol + 2 * (m - 1);                                                                        \
        if (accum) {                                                                                                  \
          const int64_t kms = k - incol;                                                                              \
          int64_t i2 = ktop - incol > 1 ? ktop - incol : 1;                                                           \
          i2 = i2 > kms - (krcol - incol) + 1 ? i2 : kms - (krcol - incol) + 1;                                       \
          const int64_t i4 = kdu < krcol + 2 * (mbot - 1) - incol + 5 ? kdu : krcol + 2 * (mbot - 1) - incol + 5;     \
          P##_lq_refl_cols(u, kdu, i2 - 1, i4 - 1, kms, 3, vv + 3 * (m - 1));                                         \
        } else if (z) {                                                                                               \
          P##_lq_refl_cols(z, ldz, iloz, ihiz, k + 1, 3, vv + 3 * (m - 1));                                           \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
    if (accum) { /* U applied to the rest of h (right of and above the segment) and to z */                           \
      const int64_t k1 = ktop - incol > 1 ? ktop - incol : 1;                                                         \
      const int64_t nu = (kdu - (ndcol - kbot > 0 ? ndcol - kbot : 0)) - k1 + 1;                                      \
      const int64_t r0 = incol + k1; /* h's first row (and column) U touches */                                       \
      const T* uu = &AOTC__LQ(u, kdu, k1 - 1, k1 - 1);                                                                \
      for (int64_t c = (ndcol < kbot ? ndcol : kbot) + 1; c < n; ++c)                                                 \
        P##_lq_rowmul(nu, &AOTC__LQ(h, ldh, r0, c), ldh, uu, kdu, tmp);                                               \
      const int64_t rtop = ktop > incol ? ktop : incol;                                                               \
      for (int64_t r = 0; r < rtop; ++r) P##_lq_rowmul(nu, &AOTC__LQ(h, ldh, r, r0), 1, uu, kdu, tmp);                \
      if (z)                                                                                                          \
        for (int64_t r = iloz; r <= ihiz; ++r) P##_lq_rowmul(nu, &AOTC__LQ(z, ldz, r, r0), 1, uu, kdu, tmp);          \
    }                                                                                                                 \
  }                                                                                                                   \
}
#endif
