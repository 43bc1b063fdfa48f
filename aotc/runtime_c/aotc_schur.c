/* aotc_schur.c -- the real Schur decomposition of XLA:CPU's lapack_[sd]gees_ffi targets
 * (jax.scipy.linalg.schur of a real matrix): A = Z T Z^T with Z orthogonal and T upper
 * quasi-triangular, its 2 x 2 diagonal blocks in LAPACK's standard form (equal diagonal,
 * off-diagonal entries of opposite signs: a complex-conjugate pair of eigenvalues).
 * Householder reduction to Hessenberg form (as ?gehd2) with Z accumulated, then LAPACK's
 * ?lahqr: Francis double-shift QR with the Ahues-Kressner deflation test and its exceptional
 * shifts, each converged 2 x 2 block standardized by ?lanv2.  wr/wi are the eigenvalues
 * (a pair as wr +- i wi, the positive imaginary part first), sdim 0 (no sorting), info 0 or
 * LAPACK's: the 1-based row whose eigenvalue did not converge.  For n > 75, ?hseqr's multishift
 * QR with aggressive early deflation instead (?laqr0, aotc_laqr.c), which finds the eigenvalues
 * in its own order.  Written once (AOTC__LA_GEES_REAL) over aotc_la_s and aotc_la_d; matrices
 * row-major.
 *
 * The real general eigenproblem (lapack_[sd]geev_ffi) starts from the same real Schur form, so
 * its eigenvalues are LAPACK's: in its order, real ones with wi exactly 0, pairs exactly
 * conjugate.  Each 2 x 2 block is then turned into a complex upper-triangular one by a 2 x 2
 * unitary similarity, and aotc_geev.c's complex back-substitution gives the eigenvectors; those
 * of real eigenvalues are made real, and the second vector of a pair is the first's conjugate,
 * as dgeev returns them (jaxlib unpacks them into complex columns).
 */
#ifndef AOTC_LINALG_H
#include "aotc_linalg.h"
#endif
#ifndef AOTC_GEEV_C
#include "aotc_geev.c" /* the complex back-substitution (aotc_la_[cz]_trevc) */
#endif
#ifndef AOTC_LAQR_C
#include "aotc_laqr.c" /* ?hseqr's multishift QR for n > 75 (AOTC__LA_LAQR_REAL) */
#endif
#include <math.h>
#include <stdint.h>
#include <string.h>

/* entry (r, c) of the row-major n x n matrix x */
#define AOTC__RS_AT(x, r, c) (x)[(int64_t)(r) * n + (c)]

/* Francis double-shift QR of the n x n upper Hessenberg h to the real Schur form (?lahqr with wantt, wantz,
   ilo = 1, ihi = n), z accumulating the transformations (NULL: none, as wantz false); wr/wi the eigenvalues.
   Returns 0, or the 1-based row i whose eigenvalue did not converge within 30 max(10, n) iterations (rows i+1..
   converged). */
#define AOTC__LA_LAHQR_REAL(P, T)                                                                                     \
AOTC_INLINE int32_t P##_rs_lahqr(int64_t n, T* h, T* z, T* wr, T* wi) {                                               \
  const int kexsh = 10;                                                                                               \
  const T dat1 = (T)0.75, dat2 = (T)-0.4375;                                                                          \
  if (n == 1) { wr[0] = h[0]; wi[0] = (T)0; }                                                                         \
  if (n <= 1) return 0;                                                                                               \
  for (int64_t j = 0; j + 3 < n; ++j) { AOTC__RS_AT(h, j + 2, j) = (T)0; AOTC__RS_AT(h, j + 3, j) = (T)0; }          \
  if (n >= 3) AOTC__RS_AT(h, n - 1, n - 3) = (T)0;                                                                   \
  const T ulp = P##_eps(), safmin = P##_sfmin();                                                                      \
  const T smlnum = safmin * ((T)n / ulp);                                                                             \
  const int64_t itmax = 30 * (n > 10 ? n : 10);                                                                       \
  int64_t kdefl = 0;                                                                                                  \
  int64_t i = n - 1;                                                                                                  \
  while (i >= 0) {                                                                                                    \
    int64_t l = 0, k = i;                                                                                             \
    int converged = 0;                                                                                                \
    for (int64_t its = 0; its <= itmax; ++its) {                                                                      \
      /* a single small subdiagonal entry */                                                                          \
      for (k = i; k > l; --k) {                                                                                       \
        const T hkk1 = P##_fabs(AOTC__RS_AT(h, k, k - 1));                                                            \
        if (hkk1 <= smlnum) break;                                                                                    \
        T tst = P##_fabs(AOTC__RS_AT(h, k - 1, k - 1)) + P##_fabs(AOTC__RS_AT(h, k, k));                              \
        if (tst == (T)0) {                                                                                            \
          if (k - 2 >= 0) tst += P##_fabs(AOTC__RS_AT(h, k - 1, k - 2));                                              \
          if (k + 1 <= n - 1) tst += P##_fabs(AOTC__RS_AT(h, k + 1, k));                                              \
        }                                                                                                             \
        if (hkk1 <= ulp * tst) { /* Ahues & Kressner's conservative test */                                          \
          const T hk1k = P##_fabs(AOTC__RS_AT(h, k - 1, k));                                                          \
          const T hkk = P##_fabs(AOTC__RS_AT(h, k, k));                                                               \
          const T dif = P##_fabs(AOTC__RS_AT(h, k - 1, k - 1) - AOTC__RS_AT(h, k, k));                                \
          const T ab = P##_rs_max(hkk1, hk1k), ba = P##_rs_min(hkk1, hk1k);                                           \
          const T aa = P##_rs_max(hkk, dif), bb = P##_rs_min(hkk, dif);                                               \
          const T s = aa + ab;                                                                                        \
          if (ba * (ab / s) <= P##_rs_max(smlnum, ulp * (bb * (aa / s)))) break;                                      \
        }                                                                                                             \
      }                                                                                                               \
      l = k;                                                                                                          \
      if (l > 0) AOTC__RS_AT(h, l, l - 1) = (T)0;                                                                     \
      if (l >= i - 1) { converged = 1; break; }                                                                       \
      ++kdefl;                                                                                                        \
      T h11, h12, h21, h22;                                                                                           \
      if (kdefl % (2 * kexsh) == 0) { /* exceptional shifts */                                                        \
        T s = P##_fabs(AOTC__RS_AT(h, i, i - 1)) + P##_fabs(AOTC__RS_AT(h, i - 1, i - 2));                            \
        h11 = dat1 * s + AOTC__RS_AT(h, i, i); h12 = dat2 * s; h21 = s; h22 = h11;                                    \
      } else if (kdefl % kexsh == 0) {                                                                                \
        T s = P##_fabs(AOTC__RS_AT(h, l + 1, l)) + P##_fabs(AOTC__RS_AT(h, l + 2, l + 1));                            \
        h11 = dat1 * s + AOTC__RS_AT(h, l, l); h12 = dat2 * s; h21 = s; h22 = h11;                                    \
      } else { /* Francis' double shift */                                                                            \
        h11 = AOTC__RS_AT(h, i - 1, i - 1); h21 = AOTC__RS_AT(h, i, i - 1);                                           \
        h12 = AOTC__RS_AT(h, i - 1, i); h22 = AOTC__RS_AT(h, i, i);                                                   \
      }                                                                                                               \
      T rt1r = (T)0, rt1i = (T)0, rt2r = (T)0, rt2i = (T)0;                                                           \
      const T s0 = P##_fabs(h11) + P##_fabs(h12) + P##_fabs(h21) + P##_fabs(h22);                                     \
      if (s0 != (T)0) {                                                                                               \
        h11 /= s0; h21 /= s0; h12 /= s0; h22 /= s0;                                                                   \
        const T tr = (h11 + h22) / (T)2;                                                                              \
        const T det = (h11 - tr) * (h22 - tr) - h12 * h21;                                                            \
        const T rtdisc = P##_sqrt(P##_fabs(det));                                                                     \
        if (det >= (T)0) { /* complex-conjugate shifts */                                                             \
          rt1r = tr * s0; rt2r = rt1r; rt1i = rtdisc * s0; rt2i = -rt1i;                                              \
        } else { /* real shifts: the one closer to h22, twice */                                                      \
          rt1r = tr + rtdisc; rt2r = tr - rtdisc;                                                                     \
          if (P##_fabs(rt1r - h22) <= P##_fabs(rt2r - h22)) { rt1r *= s0; rt2r = rt1r; }                              \
          else { rt2r *= s0; rt1r = rt2r; }                                                                           \
        }                                                                                                             \
      }                                                                                                               \
      /* two consecutive small subdiagonal entries: where the double-shift step starts */                             \
      T v[3];                                                                                                         \
      int64_t m = i - 2;                                                                                              \
      for (;; --m) {                                                                                                  \
        T h21s = AOTC__RS_AT(h, m + 1, m);                                                                            \
        T s = P##_fabs(AOTC__RS_AT(h, m, m) - rt2r) + P##_fabs(rt2i) + P##_fabs(h21s);                                \
        h21s = AOTC__RS_AT(h, m + 1, m) / s;                                                                          \
        v[0] = h21s * AOTC__RS_AT(h, m, m + 1) + (AOTC__RS_AT(h, m, m) - rt1r) * ((AOTC__RS_AT(h, m, m) - rt2r) / s)  \
               - rt1i * (rt2i / s);                                                                                   \
        v[1] = h21s * (AOTC__RS_AT(h, m, m) + AOTC__RS_AT(h, m + 1, m + 1) - rt1r - rt2r);                            \
        v[2] = h21s * AOTC__RS_AT(h, m + 2, m + 1);                                                                   \
        s = P##_fabs(v[0]) + P##_fabs(v[1]) + P##_fabs(v[2]);                                                         \
        v[0] /= s; v[1] /= s; v[2] /= s;                                                                              \
        if (m == l) break;                                                                                            \
        const T h00 = P##_fabs(AOTC__RS_AT(h, m, m - 1)) * (P##_fabs(v[1]) + P##_fabs(v[2]));                         \
        const T h01 = ulp * P##_fabs(v[0]) * (P##_fabs(AOTC__RS_AT(h, m - 1, m - 1)) + P##_fabs(AOTC__RS_AT(h, m, m)) \
                                               + P##_fabs(AOTC__RS_AT(h, m + 1, m + 1)));                             \
        if (h00 <= h01) break;                                                                                        \
      }                                                                                                               \
      /* the double-shift QR step: a bulge created at row m and chased down to row i */                               \
      for (k = m; k <= i - 1; ++k) {                                                                                  \
        const int64_t nr = i - k + 1 < 3 ? i - k + 1 : 3;                                                             \
        if (k > m)                                                                                                    \
          for (int64_t r = 0; r < nr; ++r) v[r] = AOTC__RS_AT(h, k + r, k - 1);                                       \
        const T t1 = P##_rs_larfg(nr, &v[0], &v[1], 1);                                                               \
        if (k > m) {                                                                                                  \
          AOTC__RS_AT(h, k, k - 1) = v[0];                                                                            \
          AOTC__RS_AT(h, k + 1, k - 1) = (T)0;                                                                        \
          if (k < i - 1) AOTC__RS_AT(h, k + 2, k - 1) = (T)0;                                                         \
        } else if (m > l) { /* not -h(k, k-1): v[1] and v[2] may have underflowed */                                 \
          AOTC__RS_AT(h, k, k - 1) *= (T)1 - t1;                                                                      \
        }                                                                                                             \
        const T v2 = v[1], t2 = t1 * v2;                                                                              \
        const T v3 = nr == 3 ? v[2] : (T)0, t3 = t1 * v3;                                                             \
        const int64_t last = nr == 3 ? (k + 3 < i ? k + 3 : i) : i;                                                   \
        for (int64_t j = k; j < n; ++j) { /* from the left: rows k.., columns k.. */                                  \
          T sum = AOTC__RS_AT(h, k, j) + v2 * AOTC__RS_AT(h, k + 1, j);                                               \
          if (nr == 3) sum += v3 * AOTC__RS_AT(h, k + 2, j);                                                          \
          AOTC__RS_AT(h, k, j) -= sum * t1;                                                                           \
          AOTC__RS_AT(h, k + 1, j) -= sum * t2;                                                                       \
          if (nr == 3) AOTC__RS_AT(h, k + 2, j) -= sum * t3;                                                          \
        }                                                                                                             \
        for (int pass = 0; pass < (z ? 2 : 1); ++pass) { /* from the right: rows 0..last of h, every row of z */      \
          T* x = pass ? z : h;                                                                                        \
          const int64_t rows = pass ? n : last + 1;                                                                   \
          for (int64_t j = 0; j < rows; ++j) {                                                                        \
            T sum = AOTC__RS_AT(x, j, k) + v2 * AOTC__RS_AT(x, j, k + 1);                                             \
            if (nr == 3) sum += v3 * AOTC__RS_AT(x, j, k + 2);                                                        \
            AOTC__RS_AT(x, j, k) -= sum * t1;                                                                         \
            AOTC__RS_AT(x, j, k + 1) -= sum * t2;                                                                     \
            if (nr == 3) AOTC__RS_AT(x, j, k + 2) -= sum * t3;                                                        \
          }                                                                                                           \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
    if (!converged) return (int32_t)(i + 1);                                                                          \
    if (l == i) { /* one real eigenvalue */                                                                           \
      wr[i] = AOTC__RS_AT(h, i, i);                                                                                   \
      wi[i] = (T)0;                                                                                                   \
    } else { /* a 2 x 2 block: its standard form, applied to the rest of h and to z */                                \
      T cs, sn;                                                                                                       \
      P##_rs_lanv2(&AOTC__RS_AT(h, i - 1, i - 1), &AOTC__RS_AT(h, i - 1, i), &AOTC__RS_AT(h, i, i - 1),               \
                   &AOTC__RS_AT(h, i, i), &wr[i - 1], &wi[i - 1], &wr[i], &wi[i], &cs, &sn);                           \
      if (n - 1 > i) P##_rs_rot(n - 1 - i, &AOTC__RS_AT(h, i - 1, i + 1), &AOTC__RS_AT(h, i, i + 1), 1, cs, sn);      \
      P##_rs_rot(i - 1, &AOTC__RS_AT(h, 0, i - 1), &AOTC__RS_AT(h, 0, i), n, cs, sn);                                 \
      if (z) P##_rs_rot(n, &AOTC__RS_AT(z, 0, i - 1), &AOTC__RS_AT(z, 0, i), n, cs, sn);                              \
    }                                                                                                                 \
    kdefl = 0;                                                                                                        \
    i = l - 1;                                                                                                        \
  }                                                                                                                   \
  return 0;                                                                                                           \
}

#define AOTC__LA_GEES_REAL(P, T, SAFMN2)                                                                              \
/* |a| with the sign of b (Fortran's SIGN; -0 counts as negative) */                                                  \
AOTC_INLINE T P##_rs_sign(T a, T b) { return signbit(b) ? -P##_fabs(a) : P##_fabs(a); }                             \
AOTC_INLINE T P##_rs_max(T a, T b) { return a > b ? a : b; }                                                          \
AOTC_INLINE T P##_rs_min(T a, T b) { return a < b ? a : b; }                                                          \
                                                                                                                      \
/* sqrt(x^2 + y^2) without overflow (?lapy2; a NaN operand is the result) */                                          \
AOTC_INLINE T P##_rs_lapy2(T x, T y) {                                                                                \
  if (x != x) return x;                                                                                               \
  if (y != y) return y;                                                                                               \
  T ax = P##_fabs(x), ay = P##_fabs(y);                                                                               \
  T w = P##_rs_max(ax, ay), z = P##_rs_min(ax, ay);                                                                   \
  if (z == (T)0 || w > (T)1 / P##_sfmin()) return w;                                                                 \
  z /= w;                                                                                                             \
  return w * P##_sqrt((T)1 + z * z);                                                                                  \
}                                                                                                                     \
                                                                                                                      \
/* the 2-norm of x[0..m) (stride s), scaled by its largest magnitude */                                               \
AOTC_INLINE T P##_rs_nrm2(int64_t m, const T* x, int64_t s) {                                                         \
  T amax = (T)0;                                                                                                      \
  for (int64_t r = 0; r < m; ++r) amax = P##_rs_max(amax, P##_fabs(x[r * s]));                                      \
  if (!(amax > (T)0)) return amax;                                                                                    \
  T ss = (T)0;                                                                                                        \
  for (int64_t r = 0; r < m; ++r) { T v = x[r * s] / amax; ss += v * v; }                                            \
  return amax * P##_sqrt(ss);                                                                                         \
}                                                                                                                     \
                                                                                                                      \
/* Householder reflector (?larfg): on return *alpha = beta, x[0..m-1) (stride s) = v[1..), and the tau of             \
   (I - tau v v^T) (alpha; x) = (beta; 0), v[0] = 1.  m is the order of the reflector. */                             \
AOTC_INLINE T P##_rs_larfg(int64_t m, T* alpha, T* x, int64_t s) {                                                    \
  if (m <= 1) return (T)0;                                                                                            \
  T xnorm = P##_rs_nrm2(m - 1, x, s);                                                                                 \
  if (xnorm == (T)0) return (T)0;                                                                                     \
  T beta = -P##_rs_sign(P##_rs_lapy2(*alpha, xnorm), *alpha);                                                         \
  const T safmin = P##_sfmin() / (P##_eps() * (T)0.5);                                                                \
  int knt = 0;                                                                                                        \
  if (P##_fabs(beta) < safmin) { /* beta may be inaccurate: scale x up and recompute */                              \
    const T rsafmn = (T)1 / safmin;                                                                                   \
    do {                                                                                                              \
      ++knt;                                                                                                          \
      for (int64_t r = 0; r < m - 1; ++r) x[r * s] *= rsafmn;                                                         \
      beta *= rsafmn;                                                                                                 \
      *alpha *= rsafmn;                                                                                               \
    } while (P##_fabs(beta) < safmin && knt < 20);                                                                    \
    xnorm = P##_rs_nrm2(m - 1, x, s);                                                                                 \
    beta = -P##_rs_sign(P##_rs_lapy2(*alpha, xnorm), *alpha);                                                         \
  }                                                                                                                   \
  T tau = (beta - *alpha) / beta;                                                                                     \
  T scal = (T)1 / (*alpha - beta);                                                                                    \
  for (int64_t r = 0; r < m - 1; ++r) x[r * s] *= scal;                                                               \
  for (int j = 0; j < knt; ++j) beta *= safmin;                                                                       \
  *alpha = beta;                                                                                                      \
  return tau;                                                                                                         \
}                                                                                                                     \
                                                                                                                      \
/* H = Q^T A Q upper Hessenberg (?gehd2; zeros below the subdiagonal) and z = Q.  v: n scratch. */                    \
AOTC_INLINE void P##_rs_hessenberg(int64_t n, T* h, T* z, T* v) {                                                     \
  for (int64_t r = 0; r < n; ++r)                                                                                     \
    for (int64_t c = 0; c < n; ++c) AOTC__RS_AT(z, r, c) = (T)(r == c);                                               \
  for (int64_t i = 0; i + 2 < n; ++i) {                                                                               \
    const int64_t m = n - i - 1;                                                                                      \
    T tau = P##_rs_larfg(m, &AOTC__RS_AT(h, i + 1, i), &AOTC__RS_AT(h, i + 2, i), n);                                 \
    v[0] = (T)1;                                                                                                      \
    for (int64_t r = 1; r < m; ++r) {                                                                                 \
      v[r] = AOTC__RS_AT(h, i + 1 + r, i);                                                                            \
      AOTC__RS_AT(h, i + 1 + r, i) = (T)0;                                                                            \
    }                                                                                                                 \
    if (tau == (T)0) continue;                                                                                        \
    /* from the right, on every row of h and of z: X := X - tau (X v) v^T */                                          \
    for (int pass = 0; pass < 2; ++pass) {                                                                            \
      T* x = pass ? z : h;                                                                                            \
      for (int64_t r = 0; r < n; ++r) {                                                                               \
        T* row = x + r * n + i + 1;                                                                                   \
        T s = (T)0;                                                                                                   \
        for (int64_t c = 0; c < m; ++c) s += row[c] * v[c];                                                           \
        s *= tau;                                                                                                     \
        for (int64_t c = 0; c < m; ++c) row[c] -= s * v[c];                                                           \
      }                                                                                                               \
    }                                                                                                                 \
    /* from the left, on rows i+1.. and columns i+1.. of h: X := X - tau v (v^T X) */                                 \
    for (int64_t c = i + 1; c < n; ++c) {                                                                             \
      T s = (T)0;                                                                                                     \
      for (int64_t r = 0; r < m; ++r) s += v[r] * AOTC__RS_AT(h, i + 1 + r, c);                                       \
      s *= tau;                                                                                                       \
      for (int64_t r = 0; r < m; ++r) AOTC__RS_AT(h, i + 1 + r, c) -= s * v[r];                                       \
    }                                                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* x := c x + s y, y := c y - s x over m entries (stride st) (?rot) */                                                \
AOTC_INLINE void P##_rs_rot(int64_t m, T* x, T* y, int64_t st, T c, T s) {                                            \
  for (int64_t k = 0; k < m; ++k) {                                                                                   \
    T a = x[k * st], b = y[k * st];                                                                                   \
    x[k * st] = c * a + s * b;                                                                                        \
    y[k * st] = c * b - s * a;                                                                                        \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* The Schur factorization of the real 2 x 2 matrix [a b; c d] (?lanv2): [a b; c d] :=                                \
   [cs -sn; sn cs]^T [a b; c d] [cs -sn; sn cs], upper triangular (real eigenvalues) or with a = d and                \
   b c < 0 (a complex pair: rt1 = a + i sqrt(|b| |c|), rt2 its conjugate). */                                         \
AOTC_INLINE void P##_rs_lanv2(T* a, T* b, T* c, T* d, T* rt1r, T* rt1i, T* rt2r, T* rt2i, T* cs, T* sn) {            \
  const T eps = P##_eps(), multpl = (T)4, safmn2 = SAFMN2, safmx2 = (T)1 / SAFMN2;                                   \
  if (*c == (T)0) {                                                                                                   \
    *cs = (T)1; *sn = (T)0;                                                                                           \
  } else if (*b == (T)0) { /* swap rows and columns */                                                                \
    *cs = (T)0; *sn = (T)1;                                                                                           \
    T temp = *d; *d = *a; *a = temp;                                                                                  \
    *b = -*c; *c = (T)0;                                                                                              \
  } else if (*a - *d == (T)0 && P##_rs_sign((T)1, *b) != P##_rs_sign((T)1, *c)) {                                     \
    *cs = (T)1; *sn = (T)0;                                                                                           \
  } else {                                                                                                            \
    T temp = *a - *d, p = (T)0.5 * temp;                                                                              \
    T bcmax = P##_rs_max(P##_fabs(*b), P##_fabs(*c));                                                                 \
    T bcmis = P##_rs_min(P##_fabs(*b), P##_fabs(*c)) * P##_rs_sign((T)1, *b) * P##_rs_sign((T)1, *c);                \
    T scale = P##_rs_max(P##_fabs(p), bcmax);                                                                         \
    T z = (p / scale) * p + (bcmax / scale) * bcmis;                                                                  \
    if (z >= multpl * eps) { /* real eigenvalues */                                                                   \
      z = p + P##_rs_sign(P##_sqrt(scale) * P##_sqrt(z), p);                                                          \
      *a = *d + z;                                                                                                    \
      *d = *d - (bcmax / z) * bcmis;                                                                                  \
      T tau = P##_rs_lapy2(*c, z);                                                                                    \
      *cs = z / tau; *sn = *c / tau;                                                                                  \
      *b = *b - *c; *c = (T)0;                                                                                        \
    } else { /* complex or almost equal real eigenvalues: make the diagonal entries equal */                          \
      T sigma = *b + *c;                                                                                              \
      for (int count = 1; count <= 21; ++count) {                                                                     \
        scale = P##_rs_max(P##_fabs(temp), P##_fabs(sigma));                                                          \
        if (scale >= safmx2) { sigma *= safmn2; temp *= safmn2; if (count <= 20) continue; }                          \
        else if (scale <= safmn2) { sigma *= safmx2; temp *= safmx2; if (count <= 20) continue; }                     \
        break;                                                                                                        \
      }                                                                                                               \
      p = (T)0.5 * temp;                                                                                              \
      T tau = P##_rs_lapy2(sigma, temp);                                                                                \
      *cs = P##_sqrt((T)0.5 * ((T)1 + P##_fabs(sigma) / tau));                                                        \
      *sn = -(p / (tau * *cs)) * P##_rs_sign((T)1, sigma);                                                            \
      T aa = *a * *cs + *b * *sn, bb = -*a * *sn + *b * *cs;                                                          \
      T cc = *c * *cs + *d * *sn, dd = -*c * *sn + *d * *cs;                                                          \
      *a = aa * *cs + cc * *sn; *b = bb * *cs + dd * *sn;                                                             \
      *c = -aa * *sn + cc * *cs; *d = -bb * *sn + dd * *cs;                                                           \
      temp = (T)0.5 * (*a + *d);                                                                                      \
      *a = temp; *d = temp;                                                                                           \
      if (*c != (T)0) {                                                                                               \
        if (*b != (T)0) {                                                                                             \
          if (P##_rs_sign((T)1, *b) == P##_rs_sign((T)1, *c)) { /* real eigenvalues: upper triangular */              \
            T sab = P##_sqrt(P##_fabs(*b)), sac = P##_sqrt(P##_fabs(*c));                                             \
            p = P##_rs_sign(sab * sac, *c);                                                                           \
            tau = (T)1 / P##_sqrt(P##_fabs(*b + *c));                                                                 \
            *a = temp + p; *d = temp - p;                                                                             \
            *b = *b - *c; *c = (T)0;                                                                                  \
            T cs1 = sab * tau, sn1 = sac * tau;                                                                       \
            temp = *cs * cs1 - *sn * sn1;                                                                             \
            *sn = *cs * sn1 + *sn * cs1;                                                                              \
            *cs = temp;                                                                                               \
          }                                                                                                           \
        } else {                                                                                                      \
          *b = -*c; *c = (T)0;                                                                                        \
          temp = *cs; *cs = -*sn; *sn = temp;                                                                         \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
  *rt1r = *a; *rt2r = *d;                                                                                             \
  if (*c == (T)0) {                                                                                                   \
    *rt1i = (T)0; *rt2i = (T)0;                                                                                       \
  } else {                                                                                                            \
    *rt1i = P##_sqrt(P##_fabs(*b)) * P##_sqrt(P##_fabs(*c));                                                          \
    *rt2i = -*rt1i;                                                                                                   \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
AOTC__LA_LAHQR_REAL(P, T)                                                                                             \
AOTC__LA_LAQR_REAL(P, T)                                                                                              \
                                                                                                                      \
/* dgees's return of a scaled matrix's Schur form to A's scale: T's upper Hessenberg part, wr read from its diagonal  \
   again; when scaled up from near underflow, a 2 x 2 block whose subdiagonal entry underflowed holds two real        \
   eigenvalues, and one whose superdiagonal entry did is made upper triangular (the rows and columns of its pair      \
   swapped around it, and z's columns); then wi. */                                                                   \
AOTC_INLINE void P##_gees_swap(int64_t m, T* x, int64_t sx, T* y, int64_t sy) {                                       \
  for (int64_t r = 0; r < m; ++r) { T v = x[r * sx]; x[r * sx] = y[r * sy]; y[r * sy] = v; }                          \
}                                                                                                                     \
AOTC_INLINE void P##_gees_unscale(int64_t n, T* t, T* z, T* wr, T* wi, T anrm, T cscale) {                            \
  P##_lascl(AOTC_LA_HESS, cscale, anrm, n, n, t, n);                                                                  \
  for (int64_t i = 0; i < n; ++i) wr[i] = t[i * n + i];                                                               \
  if (cscale < (T)1) {                                                                                                \
    for (int64_t i = 0; i + 1 < n; i += wi[i] == (T)0 ? 1 : 2) {                                                      \
      if (wi[i] == (T)0) continue;                                                                                    \
      if (t[(i + 1) * n + i] == (T)0) {                                                                               \
        wi[i] = wi[i + 1] = (T)0;                                                                                     \
      } else if (t[i * n + i + 1] == (T)0) {                                                                          \
        wi[i] = wi[i + 1] = (T)0;                                                                                     \
        P##_gees_swap(i, t + i, n, t + i + 1, n);                             /* columns i, i + 1 above the block */  \
        P##_gees_swap(n - i - 2, t + i * n + i + 2, 1, t + (i + 1) * n + i + 2, 1); /* rows i, i + 1 after it */      \
        if (z) P##_gees_swap(n, z + i, n, z + i + 1, n);                                                              \
        t[i * n + i + 1] = t[(i + 1) * n + i];                                                                        \
        t[(i + 1) * n + i] = (T)0;                                                                                    \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
  P##_lascl_r(cscale, anrm, n, wi);                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* The real Schur decomposition (?gees, no sorting) of the row-major n x n src: t = T, z = Z (zeros unless            \
   `vectors`), wr/wi the eigenvalues, *sdim = 0, *info as ?hseqr's.  work: n*n + 2n + AOTC_LA_LAQR_WORK(n)            \
   elements (the QR's Z, a vector, ?gebal's permutation, then P##_rs_hseqr's work). */                                \
AOTC_RT_API void P##_gees(int vectors, int64_t n, const T* src, T* t, T* z, T* wr, T* wi, int32_t* sdim,              \
                          int32_t* info, T* work) {                                                                   \
  *sdim = 0;                                                                                                          \
  *info = 0;                                                                                                          \
  if (n <= 0) return;                                                                                                 \
  if (t != src) memcpy(t, src, (size_t)(n * n) * sizeof(T));                                                          \
  T* sc = work + n * n + n;                                                                                           \
  int64_t ilo, ihi;                                                                                                   \
  const T anrm = P##_lange_max(AOTC_LA_ALL, n, n, t, n), cscale = P##_drv_scale(anrm);                                \
  if (cscale != (T)0) P##_lascl(AOTC_LA_ALL, anrm, cscale, n, n, t, n); /* dgees's scaling */                         \
  P##_gebal(1, 0, n, t, sc, &ilo, &ihi); /* dgees permutes (no scaling), then moves the vectors back */               \
  P##_rs_hessenberg(n, t, work, work + n * n);                                                                        \
  *info = P##_rs_hseqr(n, ilo, ihi, t, work, wr, wi, work + n * n + 2 * n);                                          \
  P##_gees_vectors(vectors, n, z, work, sc, ilo, ihi);                                                                \
  if (cscale != (T)0) P##_gees_unscale(n, t, vectors ? z : NULL, wr, wi, anrm, cscale);                               \
}

/* Not vectorized by GCC: with FMA available (-mfma, -march=native) its SLP vectorizer turns the row
 * updates of the QR step (alternating - and + of products) into vfmsubadd even under
 * -ffp-contract=off, and the bits would follow the flags (as complex products in aotc_linalg.c).
 * SAFMN2 of ?lanv2: 2^int(log2(safmin / eps) / 2). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("no-tree-vectorize")
#endif
AOTC__LA_GEES_REAL(aotc_la_s, float, 0x1p-51f)
AOTC__LA_GEES_REAL(aotc_la_d, double, 0x1p-485)

/* The real general eigenproblem (?geev): wr/wi the eigenvalues, vl/vr (complex columns, zeros unless asked)
   the normalized left/right eigenvectors, *info as ?hseqr's (everything NaN then).  work: 3n^2 + 4n complex,
   then P##_rs_hseqr's AOTC_LA_LAQR_WORK(n) reals: 3n^2 + 4n + (AOTC_LA_LAQR_WORK(n) + 1) / 2 complex. */
#define AOTC__LA_GEEV_REAL(P, Q, T, CT)                                                                               \
/* T_c := U^H T_c U and z_c := z_c U for the unitary U = [b i w; i w b] / hypot(b, w) that triangularizes the         \
   standard block [a b; c a] at row i (w = sqrt(|b| |c|)): the eigenvalue a + i w first, as dgeev orders them. */     \
AOTC_INLINE void P##_ev_block(int64_t n, CT* t, CT* z, int64_t i, T a, T w) {                                         \
  const T b = Q##_re(t[i * n + i + 1]), r = P##_rs_lapy2(b, w);                                                       \
  const CT u = Q##_mk(b / r, (T)0), iv = Q##_mk((T)0, w / r), niv = Q##_conj(iv);                                     \
  for (int64_t j = i; j < n; ++j) { /* rows i, i+1: U^H */                                                            \
    CT x = t[i * n + j], y = t[(i + 1) * n + j];                                                                      \
    t[i * n + j] = Q##_add(Q##_mul(u, x), Q##_mul(niv, y));                                                           \
    t[(i + 1) * n + j] = Q##_add(Q##_mul(niv, x), Q##_mul(u, y));                                                     \
  }                                                                                                                   \
  for (int pass = 0; pass < 2; ++pass) { /* columns i, i+1: U */                                                      \
    CT* x = pass ? z : t;                                                                                             \
    const int64_t rows = pass ? n : i + 2;                                                                            \
    for (int64_t r2 = 0; r2 < rows; ++r2) {                                                                           \
      CT p = x[r2 * n + i], q = x[r2 * n + i + 1];                                                                    \
      x[r2 * n + i] = Q##_add(Q##_mul(p, u), Q##_mul(q, iv));                                                         \
      x[r2 * n + i + 1] = Q##_add(Q##_mul(p, iv), Q##_mul(q, u));                                                     \
    }                                                                                                                 \
  }                                                                                                                   \
  t[i * n + i] = Q##_mk(a, w);                                                                                        \
  t[(i + 1) * n + i + 1] = Q##_mk(a, -w);                                                                             \
  t[(i + 1) * n + i] = Q##_mk((T)0, (T)0);                                                                            \
}                                                                                                                     \
                                                                                                                      \
/* dgeev's vectors from zgeev's: a real eigenvalue's column made real (unit 2-norm), a pair's second column the      \
   conjugate of its first. */                                                                                         \
AOTC_INLINE void P##_ev_real_columns(int64_t n, const T* wi, CT* v) {                                                 \
  for (int64_t k = 0; k < n; ++k) {                                                                                   \
    if (wi[k] == (T)0) {                                                                                              \
      T ss = (T)0, amax = (T)0;                                                                                       \
      for (int64_t r = 0; r < n; ++r) amax = P##_rs_max(amax, P##_fabs(Q##_re(v[r * n + k])));                       \
      for (int64_t r = 0; r < n; ++r) {                                                                               \
        T x = amax > (T)0 ? Q##_re(v[r * n + k]) / amax : (T)0;                                                       \
        ss += x * x;                                                                                                  \
      }                                                                                                               \
      const T scl = amax > (T)0 ? (T)1 / (amax * P##_sqrt(ss)) : (T)0;                                                \
      for (int64_t r = 0; r < n; ++r) v[r * n + k] = Q##_mk(Q##_re(v[r * n + k]) * scl, (T)0);                       \
    } else if (wi[k] > (T)0 && k + 1 < n) {                                                                           \
      for (int64_t r = 0; r < n; ++r) v[r * n + k + 1] = Q##_conj(v[r * n + k]);                                      \
    }                                                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* The phases (ph[k] right, ph[n + k] left) of the vectors P##_trevc computes for the pair at rows i, i + 1 against   \
   dtrevc's, which starts from the standard block [a b; c a] of h: x(i) = 1, x(i+1) = i w / b when |b| >= |c|, else   \
   x(i) = -w / c, x(i+1) = i (right); x(i) = w / b, x(i+1) = i, else x(i) = 1, x(i+1) = -i w / c (left).  Ours start  \
   from x = e_i in the triangular coordinates of t (after P##_ev_block), moved to h's by U: U e_i right; left,        \
   U (e_i + y e_{i+1}) with y the first step of the back-substitution. */                                            \
AOTC_INLINE void P##_ev_phase(int64_t n, const T* h, const CT* t, int64_t i, T w, CT* ph) {                           \
  const T b = h[i * n + i + 1], c = h[(i + 1) * n + i], r = P##_rs_lapy2(b, w);                                       \
  const CT u = Q##_mk(b / r, (T)0), iv = Q##_mk((T)0, w / r);                                                         \
  const int first = P##_fabs(b) >= P##_fabs(c);                                                                       \
  ph[i] = Q##_mk(first ? b : (T)1, (T)0); /* U e_i = (u, iv): b / r times dtrevc's, or w / r times */                 \
  const CT y = Q##_div(Q##_sub(Q##_mk((T)0, (T)0), Q##_conj(t[i * n + i + 1])), Q##_mk((T)0, (T)2 * w));              \
  const CT l0 = Q##_add(u, Q##_mul(iv, y)), l1 = Q##_add(iv, Q##_mul(u, y));                                          \
  ph[n + i] = first ? Q##_mk(Q##_im(l1), -Q##_re(l1)) : l0; /* l1 / i, or l0 / 1 */                                   \
}                                                                                                                     \
                                                                                                                      \
/* dgeev's eigenvalues back to A's scale (cscale 0: not scaled) */                                                    \
AOTC_INLINE void P##_geev_unscale(int64_t n, T* wr, T* wi, T anrm, T cscale) {                                        \
  if (cscale == (T)0) return;                                                                                         \
  P##_lascl_r(cscale, anrm, n, wr);                                                                                   \
  P##_lascl_r(cscale, anrm, n, wi);                                                                                   \
}                                                                                                                     \
                                                                                                                      \
AOTC_RT_API void P##_geev(int left, int right, int64_t n, const T* src, T* wr, T* wi, CT* vl, CT* vr,                 \
                          int32_t* info, CT* work) {                                                                  \
  *info = 0;                                                                                                          \
  if (n <= 0) return;                                                                                                 \
  CT* tc = work;                                                                                                      \
  CT* zc = work + n * n;                                                                                              \
  CT* x = work + 2 * n * n;                                                                                           \
  T* h = (T*)(work + 2 * n * n + n);                                                                                  \
  T* zr = h + n * n;                                                                                                  \
  T* sc = zr + n * n + n;                                                                                             \
  CT* ph = (CT*)(sc + n); /* 2n complex: the pairs' phases (P##_ev_phase) */                                          \
  int64_t ilo, ihi;                                                                                                   \
  memcpy(h, src, (size_t)(n * n) * sizeof(T));                                                                        \
  const T anrm = P##_lange_max(AOTC_LA_ALL, n, n, h, n), cscale = P##_drv_scale(anrm);                                \
  if (cscale != (T)0) P##_lascl(AOTC_LA_ALL, anrm, cscale, n, n, h, n); /* dgeev's scaling */                         \
  P##_gebal(1, 1, n, h, sc, &ilo, &ihi); /* dgeev balances: permutes and scales */                                    \
  P##_rs_hessenberg(n, h, zr, zr + n * n);                                                                            \
  *info = P##_rs_hseqr(n, ilo, ihi, h, zr, wr, wi, (T*)(ph + 2 * n));                                                \
  if (!left) memset(vl, 0, (size_t)(n * n) * sizeof(CT));                                                             \
  if (!right) memset(vr, 0, (size_t)(n * n) * sizeof(CT));                                                            \
  if (*info != 0) {                                                                                                   \
    const CT nan = Q##_mk((T)NAN, (T)NAN);                                                                            \
    for (int64_t i = 0; i < n; ++i) { wr[i] = (T)NAN; wi[i] = (T)NAN; }                                               \
    for (int64_t i = 0; i < n * n; ++i) { if (left) vl[i] = nan; if (right) vr[i] = nan; }                            \
    return;                                                                                                           \
  }                                                                                                                   \
  if (!left && !right) {                                                                                              \
    P##_geev_unscale(n, wr, wi, anrm, cscale);                                                                        \
    return;                                                                                                           \
  }                                                                                                                   \
  for (int64_t i = 0; i < n * n; ++i) { tc[i] = Q##_mk(h[i], (T)0); zc[i] = Q##_mk(zr[i], (T)0); }                    \
  for (int64_t i = 0; i + 1 < n; ++i)                                                                                 \
    if (wi[i] > (T)0) {                                                                                               \
      P##_ev_block(n, tc, zc, i, wr[i], wi[i]);                                                                       \
      P##_ev_phase(n, h, tc, i, wi[i], ph);                                                                           \
    }                                                                                                                 \
  Q##_trevc(left, right, n, tc, zc, vl, vr, x, sc, ilo, ihi, wi, ph);                                                 \
  if (left) P##_ev_real_columns(n, wi, vl);                                                                           \
  if (right) P##_ev_real_columns(n, wi, vr);                                                                          \
  P##_geev_unscale(n, wr, wi, anrm, cscale); /* after the vectors: P##_ev_block reads the scaled ones */              \
}

AOTC__LA_GEEV_REAL(aotc_la_s, aotc_la_c, float, aotc_c64)
AOTC__LA_GEEV_REAL(aotc_la_d, aotc_la_z, double, aotc_c128)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
