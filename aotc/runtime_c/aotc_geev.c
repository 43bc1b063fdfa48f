/* aotc_geev.c -- the general eigenproblem of XLA:CPU's lapack_?geev_ffi targets: eigenvalues
 * and right/left eigenvectors of a square matrix.  Householder reduction to Hessenberg form,
 * single-shift complex QR with LAPACK's (zlahqr's) deflation test and shifts to the Schur form
 * T = Z^H A Z (for n > 75 zhseqr's multishift QR with aggressive early deflation, aotc_laqr_c.c),
 * eigenvectors of T by back-substitution (as ztrevc) moved back by Z, and zgeev's normalization:
 * unit 2-norm, largest component real.  Written once in complex arithmetic
 * (AOTC__LA_GEEV over aotc_la_c and aotc_la_z).  The matrix is balanced first (permuted and
 * scaled, as LAPACK 3.12's ?gebal) and the eigenvectors moved back (?gebak).  The complex
 * Schur decomposition of lapack_[cz]gees_ffi is the same Hessenberg reduction and QR.  The real
 * targets (aotc_schur.c) take LAPACK's real double-shift QR, then these eigenvectors.
 */
#ifndef AOTC_GEEV_C
#define AOTC_GEEV_C 1 /* the guard of aotc_schur.c's #include of this file */
#ifndef AOTC_LINALG_H
#include "aotc_linalg.h"
#endif
#ifndef AOTC_LAQR_C_C
#include "aotc_laqr_c.c" /* the multishift QR of n > 75 (AOTC__LA_LAQR_CPLX) */
#endif
#include <math.h>
#include <stdint.h>
#include <string.h>

#define AOTC__LA_BALANCE(P, T, R)                                                                                     \
/* LAPACK's ?gebal as XLA:CPU's LAPACK (3.12) runs it, on the n x n row-major a: with `permute`, rows and columns     \
   exchanged to isolate eigenvalues (a row with no other nonzero in columns 0..l pushed down to l, a column with no   \
   other nonzero in rows k..l pushed left to k, each search repeated until nothing moves); with `scale`, rows and     \
   columns k..l scaled by powers of 2 until their 2-norms are as close as ?gebal's test makes them.  *ilo..*ihi is    \
   the block left (0-based); scale[i] outside it is the index exchanged with i, inside it the factor. */              \
AOTC_INLINE R P##_bal_max3(R x, R y, R z) { R m = x > y ? x : y; return m > z ? m : z; }                              \
AOTC_INLINE R P##_bal_min3(R x, R y, R z) { R m = x < y ? x : y; return m < z ? m : z; }                              \
AOTC_INLINE R P##_bal_nrm2(int64_t m, const T* x, int64_t s) {                                                        \
  R amax = (R)0, ss = (R)0;                                                                                           \
  for (int64_t i = 0; i < m; ++i) { R a = P##_abs(x[i * s]); amax = a > amax ? a : amax; }                            \
  if (!(amax > (R)0)) return amax;                                                                                    \
  for (int64_t i = 0; i < m; ++i) ss += P##_abs2(P##_rmul(x[i * s], (R)1 / amax));                                    \
  return amax * P##_sqrt(ss);                                                                                         \
}                                                                                                                     \
AOTC_INLINE R P##_bal_amax(int64_t m, const T* x, int64_t s) { /* |x[i?amax]|: the first largest |re| + |im| */       \
  int64_t best = 0;                                                                                                   \
  R bv = (R)-1;                                                                                                       \
  for (int64_t i = 0; i < m; ++i) { R a = P##_abs1(x[i * s]); if (a > bv) { bv = a; best = i; } }                     \
  return m > 0 ? P##_abs(x[best * s]) : (R)0;                                                                         \
}                                                                                                                     \
AOTC_INLINE void P##_bal_swap(int64_t n, T* a, int64_t i, int64_t j, int64_t k, int64_t l) {                          \
  for (int64_t r = 0; r <= l; ++r) { T t = a[r * n + i]; a[r * n + i] = a[r * n + j]; a[r * n + j] = t; }             \
  for (int64_t c = k; c < n; ++c) { T t = a[i * n + c]; a[i * n + c] = a[j * n + c]; a[j * n + c] = t; }              \
}                                                                                                                     \
AOTC_INLINE void P##_gebal(int permute, int scale, int64_t n, T* a, R* sc, int64_t* ilo, int64_t* ihi) {              \
  int64_t k = 0, l = n - 1;                                                                                           \
  *ilo = 0;                                                                                                           \
  *ihi = l;                                                                                                           \
  if (n <= 0) return;                                                                                                 \
  for (int noconv = permute; noconv;) {                                                                               \
    noconv = 0;                                                                                                       \
    for (int64_t i = l; i >= 0; --i) { /* the loop's range is fixed when it starts, as in Fortran */                  \
      int can = 1;                                                                                                    \
      for (int64_t j = 0; j <= l && can; ++j) can = i == j || P##_abs1(a[i * n + j]) == (R)0;                         \
      if (!can) continue;                                                                                             \
      sc[l] = (R)i;                                                                                                   \
      if (i != l) P##_bal_swap(n, a, i, l, k, l);                                                                     \
      noconv = 1;                                                                                                     \
      if (l == 0) { *ihi = 0; return; }                                                                               \
      --l;                                                                                                            \
    }                                                                                                                 \
  }                                                                                                                   \
  for (int noconv = permute; noconv;) {                                                                               \
    noconv = 0;                                                                                                       \
    for (int64_t j = k, l0 = l; j <= l0; ++j) {                                                                       \
      int can = 1;                                                                                                    \
      for (int64_t i = k; i <= l && can; ++i) can = i == j || P##_abs1(a[i * n + j]) == (R)0;                         \
      if (!can) continue;                                                                                             \
      sc[k] = (R)j;                                                                                                   \
      if (j != k) P##_bal_swap(n, a, j, k, k, l);                                                                     \
      noconv = 1;                                                                                                     \
      ++k;                                                                                                            \
    }                                                                                                                 \
  }                                                                                                                   \
  for (int64_t i = k; i <= l; ++i) sc[i] = (R)1;                                                                      \
  *ilo = k;                                                                                                           \
  *ihi = l;                                                                                                           \
  if (!scale) return;                                                                                                 \
  const R sfmin1 = P##_sfmin() / P##_eps(), sfmax1 = (R)1 / sfmin1;                                                   \
  const R sfmin2 = sfmin1 * (R)2, sfmax2 = (R)1 / sfmin2;                                                             \
  for (int noconv = 1; noconv;) {                                                                                     \
    noconv = 0;                                                                                                       \
    for (int64_t i = k; i <= l; ++i) {                                                                                \
      R c = P##_bal_nrm2(l - k + 1, a + k * n + i, n), r = P##_bal_nrm2(l - k + 1, a + i * n + k, 1);                 \
      R ca = P##_bal_amax(l + 1, a + i, n), ra = P##_bal_amax(n - k, a + i * n + k, 1);                               \
      if (c == (R)0 || r == (R)0) continue;                                                                           \
      if (c + ca + r + ra != c + ca + r + ra) return; /* NaN: as ?gebal, stop */                                      \
      R g = r / (R)2, f = (R)1, s = c + r;                                                                            \
      while (c < g && P##_bal_max3(f, c, ca) < sfmax2 && P##_bal_min3(r, g, ra) > sfmin2) {                           \
        f *= (R)2; c *= (R)2; ca *= (R)2; r /= (R)2; g /= (R)2; ra /= (R)2;                                           \
      }                                                                                                               \
      g = c / (R)2;                                                                                                   \
      while (g >= r && (r > ra ? r : ra) < sfmax2 && P##_bal_min3(P##_bal_min3(f, c, g), ca, ca) > sfmin2) {          \
        f /= (R)2; c /= (R)2; g /= (R)2; ca /= (R)2; r *= (R)2; ra *= (R)2;                                           \
      }                                                                                                               \
      if (c + r >= (R)0.95 * s) continue;                                                                             \
      if (f < (R)1 && sc[i] < (R)1 && f * sc[i] <= sfmin1) continue;                                                  \
      if (f > (R)1 && sc[i] > (R)1 && sc[i] >= sfmax1 / f) continue;                                                  \
      g = (R)1 / f;                                                                                                   \
      sc[i] *= f;                                                                                                     \
      noconv = 1;                                                                                                     \
      for (int64_t cc = k; cc < n; ++cc) a[i * n + cc] = P##_rmul(a[i * n + cc], g);                                  \
      for (int64_t rr = 0; rr <= l; ++rr) a[rr * n + i] = P##_rmul(a[rr * n + i], f);                                 \
    }                                                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
/* ?gebak on column c of the n x n row-major v: rows ilo..ihi times scale (right vectors) or over it (left), then     \
   the exchanges undone, those before ilo from ilo - 1 down, then those after ihi upwards. */                         \
AOTC_INLINE void P##_gebak(int left, int64_t n, T* v, int64_t c, const R* sc, int64_t ilo, int64_t ihi) {             \
  for (int64_t i = ilo; i <= ihi && ilo < ihi; ++i) /* none when ilo == ihi (scale[ilo] may be an index) */           \
    v[i * n + c] = P##_rmul(v[i * n + c], left ? (R)1 / sc[i] : sc[i]);                                               \
  for (int64_t ii = 0; ii < n; ++ii) {                                                                                \
    int64_t i = ii;                                                                                                   \
    if (i >= ilo && i <= ihi) continue;                                                                               \
    if (i < ilo) i = ilo - 1 - ii;                                                                                    \
    const int64_t k = (int64_t)sc[i];                                                                                 \
    if (k != i) { T t = v[i * n + c]; v[i * n + c] = v[k * n + c]; v[k * n + c] = t; }                                \
  }                                                                                                                   \
}                                                                                                                     \
/* ?gees's Schur vectors: the QR's q moved back by ?gebak into z, or zeros without `vectors`. */                      \
AOTC_INLINE void P##_gees_vectors(int vectors, int64_t n, T* z, const T* q, const R* sc, int64_t ilo, int64_t ihi) {  \
  if (!vectors) {                                                                                                     \
    memset(z, 0, (size_t)(n * n) * sizeof(T));                                                                        \
    return;                                                                                                           \
  }                                                                                                                   \
  memcpy(z, q, (size_t)(n * n) * sizeof(T));                                                                          \
  for (int64_t c = 0; c < n; ++c) P##_gebak(0, n, z, c, sc, ilo, ihi);                                                \
}
AOTC__LA_BALANCE(aotc_la_s, float, float)
AOTC__LA_BALANCE(aotc_la_d, double, double)
AOTC__LA_BALANCE(aotc_la_c, aotc_c64, float)
AOTC__LA_BALANCE(aotc_la_z, aotc_c128, double)

#define AOTC__LA_GEEV(P, T, R)                                                                                        \
/* sqrt(x^2 + y^2 + z^2) without overflow (LAPACK's ?lapy3). */                                                       \
AOTC_INLINE R P##_hq_lapy3(R x, R y, R z) {                                                                           \
  R ax = P##_fabs(x), ay = P##_fabs(y), az = P##_fabs(z);                                                             \
  R w = ax > ay ? ax : ay;                                                                                            \
  w = w > az ? w : az;                                                                                                \
  if (w == (R)0) return ax + ay + az;                                                                                 \
  ax /= w; ay /= w; az /= w;                                                                                          \
  return w * P##_sqrt(ax * ax + ay * ay + az * az);                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* Householder reflector of x[0..m) (stride s), LAPACK's ?larfg: x[0] := beta (real), x[1..) := v[1..), returns       \
   tau with (I - tau v v^H)^H x = beta e1, v[0] = 1. */                                                               \
AOTC_INLINE T P##_hq_larfg(int64_t m, T* x, int64_t s) {                                                              \
  R amax = (R)0;                                                                                                      \
  for (int64_t r = 1; r < m; ++r) {                                                                                   \
    R v = P##_fabs(P##_re(x[r * s])), w = P##_fabs(P##_im(x[r * s]));                                                 \
    amax = v > amax ? v : amax;                                                                                       \
    amax = w > amax ? w : amax;                                                                                       \
  }                                                                                                                   \
  R xnorm = (R)0;                                                                                                     \
  if (amax > (R)0) {                                                                                                  \
    R ss = (R)0;                                                                                                      \
    for (int64_t r = 1; r < m; ++r) ss += P##_abs2(P##_rmul(x[r * s], (R)1 / amax));                                  \
    xnorm = amax * P##_sqrt(ss);                                                                                      \
  }                                                                                                                   \
  T alpha = x[0];                                                                                                     \
  R ar = P##_re(alpha), ai = P##_im(alpha);                                                                           \
  if (xnorm == (R)0 && ai == (R)0) return P##_mk((R)0, (R)0);                                                         \
  R beta = P##_hq_lapy3(ar, ai, xnorm);                                                                               \
  if (ar >= (R)0) beta = -beta;                                                                                       \
  T tau = P##_mk((beta - ar) / beta, -ai / beta);                                                                     \
  T scal = P##_div(P##_mk((R)1, (R)0), P##_sub(alpha, P##_mk(beta, (R)0)));                                           \
  for (int64_t r = 1; r < m; ++r) x[r * s] = P##_mul(x[r * s], scal);                                                 \
  x[0] = P##_mk(beta, (R)0);                                                                                          \
  return tau;                                                                                                         \
}                                                                                                                     \
                                                                                                                      \
/* Reduce the n x n row-major h to upper Hessenberg form H = Q^H A Q (as ?gehd2) and set z = Q.  v: n scratch. */     \
AOTC_INLINE void P##_hessenberg(int64_t n, T* h, T* z, T* v) {                                                        \
  for (int64_t r = 0; r < n; ++r)                                                                                     \
    for (int64_t c = 0; c < n; ++c) z[r * n + c] = P##_mk((R)(r == c), (R)0);                                         \
  for (int64_t i = 0; i + 2 < n; ++i) {                                                                               \
    int64_t m = n - i - 1;                                                                                            \
    T tau = P##_hq_larfg(m, h + (i + 1) * n + i, n);                                                                  \
    v[0] = P##_mk((R)1, (R)0);                                                                                        \
    for (int64_t r = 1; r < m; ++r) {                                                                                 \
      v[r] = h[(i + 1 + r) * n + i];                                                                                  \
      h[(i + 1 + r) * n + i] = P##_mk((R)0, (R)0);                                                                    \
    }                                                                                                                 \
    if (P##_iszero(tau)) continue;                                                                                    \
    /* right: rows 0..n, columns i+1.. of h and of z: X := X - tau (X v) v^H */                                       \
    for (int pass = 0; pass < 2; ++pass) {                                                                            \
      T* x = pass ? z : h;                                                                                            \
      for (int64_t r = 0; r < n; ++r) {                                                                               \
        T* row = x + r * n + i + 1;                                                                                   \
        T s = P##_mk((R)0, (R)0);                                                                                     \
        for (int64_t c = 0; c < m; ++c) s = P##_add(s, P##_mul(row[c], v[c]));                                        \
        s = P##_mul(s, tau);                                                                                          \
        for (int64_t c = 0; c < m; ++c) row[c] = P##_sub(row[c], P##_mul(s, P##_conj(v[c])));                         \
      }                                                                                                               \
    }                                                                                                                 \
    /* left: rows i+1.., columns i+1..: X := X - conj(tau) v (v^H X) */                                               \
    T ct = P##_conj(tau);                                                                                             \
    for (int64_t c = i + 1; c < n; ++c) {                                                                             \
      T s = P##_mk((R)0, (R)0);                                                                                       \
      for (int64_t r = 0; r < m; ++r) s = P##_add(s, P##_mul(P##_conj(v[r]), h[(i + 1 + r) * n + c]));                \
      s = P##_mul(ct, s);                                                                                             \
      for (int64_t r = 0; r < m; ++r) h[(i + 1 + r) * n + c] = P##_sub(h[(i + 1 + r) * n + c], P##_mul(v[r], s));     \
    }                                                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* Complex square root, principal branch (as Fortran's SQRT of a complex). */                                         \
AOTC_INLINE T P##_csqrt(T a) {                                                                                        \
  R x = P##_re(a), y = P##_im(a), m = P##_abs(a);                                                                     \
  if (m == (R)0) return P##_mk((R)0, (R)0);                                                                           \
  R t = P##_sqrt((R)0.5 * (m + P##_fabs(x)));                                                                         \
  if (x >= (R)0) return P##_mk(t, y / ((R)2 * t));                                                                    \
  return P##_mk(P##_fabs(y) / ((R)2 * t), y < (R)0 ? -t : t);                                                         \
}                                                                                                                     \
                                                                                                                      \
/* Make the subdiagonal h[i][i-1] real by scaling row i by conj(phase) and column i (and z's) by phase. */            \
AOTC_INLINE void P##_real_subdiag(int64_t n, T* h, T* z, int64_t i) {                                                 \
  T sub = h[i * n + i - 1];                                                                                           \
  if (P##_im(sub) == (R)0) return;                                                                                    \
  R a = P##_abs(sub);                                                                                                 \
  T ph = P##_rmul(sub, (R)1 / a), cph = P##_conj(ph);                                                                 \
  h[i * n + i - 1] = P##_mk(a, (R)0);                                                                                 \
  for (int64_t c = i + 1; c < n; ++c) h[i * n + c] = P##_mul(h[i * n + c], cph);                                      \
  for (int64_t r = 0; r < i; ++r) h[r * n + i] = P##_mul(h[r * n + i], ph);                                           \
  for (int64_t r = 0; r < n; ++r) z[r * n + i] = P##_mul(z[r * n + i], ph);                                           \
}                                                                                                                     \
/* Schur form of the Hessenberg h by single-shift QR (as ?lahqr with wantt and wantz): h := T, z := z Q,              \
   w := diag(T).  Returns 0, or the 1-based index of an eigenvalue that did not converge. */                          \
AOTC_INLINE int32_t P##_lahqr(int64_t n, T* h, T* z, T* w) {                                                          \
  const R ulp = P##_eps(), smlnum = P##_sfmin() * ((R)n / ulp);                                                       \
  const int64_t itmax = 30 * (n > 10 ? n : 10);                                                                       \
  const T zero = P##_mk((R)0, (R)0);                                                                                  \
  for (int64_t i = 1; i < n; ++i) P##_real_subdiag(n, h, z, i);                                                       \
  for (int64_t i = n - 1; i >= 0;) {                                                                                  \
    int64_t l = 0;                                                                                                    \
    int done = 0;                                                                                                     \
    for (int64_t its = 0; its <= itmax; ++its) {                                                                      \
      int64_t k = i;                                                                                                  \
      for (; k > l; --k) {                                                                                            \
        T sub = h[k * n + k - 1];                                                                                     \
        if (P##_abs1(sub) <= smlnum) break;                                                                           \
        R tst = P##_abs1(h[(k - 1) * n + k - 1]) + P##_abs1(h[k * n + k]);                                            \
        if (tst == (R)0) {                                                                                            \
          if (k - 2 >= l) tst += P##_fabs(P##_re(h[(k - 1) * n + k - 2]));                                            \
          if (k + 1 <= i) tst += P##_fabs(P##_re(h[(k + 1) * n + k]));                                                \
        }                                                                                                             \
        if (P##_abs1(sub) <= ulp * tst) {                                                                             \
          R s1 = P##_abs1(sub), s2 = P##_abs1(h[(k - 1) * n + k]);                                                    \
          R ab = s1 > s2 ? s1 : s2, ba = s1 > s2 ? s2 : s1;                                                           \
          R d1 = P##_abs1(h[k * n + k]), d2 = P##_abs1(P##_sub(h[(k - 1) * n + k - 1], h[k * n + k]));                \
          R aa = d1 > d2 ? d1 : d2, bb = d1 > d2 ? d2 : d1, s = aa + ab;                                              \
          R rhs = ulp * (bb * (aa / s));                                                                              \
          if (ba * (ab / s) <= (smlnum > rhs ? smlnum : rhs)) break;                                                  \
        }                                                                                                             \
      }                                                                                                               \
      l = k;                                                                                                          \
      if (l > 0) h[l * n + l - 1] = zero;                                                                             \
      if (l >= i) { done = 1; break; }                                                                                \
      T t; /* the exceptional shifts of LAPACK 3.12 at the 10th and 20th step since the last deflation */             \
      if ((its + 1) % 20 == 10) {                                                                                     \
        t = P##_add(h[l * n + l], P##_mk((R)0.75 * P##_fabs(P##_re(h[(l + 1) * n + l])), (R)0));                      \
      } else if ((its + 1) % 20 == 0) {                                                                               \
        t = P##_add(h[i * n + i], P##_mk((R)0.75 * P##_fabs(P##_re(h[i * n + i - 1])), (R)0));                        \
      } else { /* Wilkinson's shift */                                                                                \
        t = h[i * n + i];                                                                                             \
        T u = P##_mul(P##_csqrt(h[(i - 1) * n + i]), P##_csqrt(h[i * n + i - 1]));                                    \
        R s = P##_abs1(u);                                                                                            \
        if (s != (R)0) {                                                                                              \
          T x = P##_rmul(P##_sub(h[(i - 1) * n + i - 1], t), (R)0.5);                                                 \
          R sx = P##_abs1(x);                                                                                         \
          s = s > sx ? s : sx;                                                                                        \
          T xs = P##_rmul(x, (R)1 / s), us = P##_rmul(u, (R)1 / s);                                                   \
          T y = P##_rmul(P##_csqrt(P##_add(P##_mul(xs, xs), P##_mul(us, us))), s);                                    \
          if (sx > (R)0) {                                                                                            \
            T xn = P##_rmul(x, (R)1 / sx);                                                                            \
            if (P##_re(xn) * P##_re(y) + P##_im(xn) * P##_im(y) < (R)0) y = P##_sub(zero, y);                         \
          }                                                                                                           \
          t = P##_sub(t, P##_mul(u, P##_div(u, P##_add(x, y))));                                                      \
        }                                                                                                             \
      }                                                                                                               \
      /* start the sweep at the lowest m >= l where two small subdiagonals make a bulge harmless */                   \
      int64_t m = l;                                                                                                  \
      T v[2] = {zero, zero};                                                                                          \
      for (int64_t mm = i - 1; mm >= l; --mm) {                                                                       \
        T h11 = h[mm * n + mm], h22 = h[(mm + 1) * n + mm + 1], h11s = P##_sub(h11, t);                               \
        R h21 = P##_re(h[(mm + 1) * n + mm]);                                                                         \
        R s = P##_abs1(h11s) + P##_fabs(h21);                                                                         \
        h11s = P##_rmul(h11s, (R)1 / s);                                                                              \
        h21 /= s;                                                                                                     \
        v[0] = h11s;                                                                                                  \
        v[1] = P##_mk(h21, (R)0);                                                                                     \
        m = mm;                                                                                                       \
        if (mm == l) break;                                                                                           \
        R h10 = P##_re(h[mm * n + mm - 1]);                                                                           \
        if (P##_fabs(h10) * P##_fabs(h21) <= ulp * (P##_abs1(h11s) * (P##_abs1(h11) + P##_abs1(h22)))) break;         \
      }                                                                                                               \
      /* one implicit single-shift QR sweep over rows m..i */                                                         \
      for (int64_t k2 = m; k2 < i; ++k2) {                                                                            \
        if (k2 > m) { v[0] = h[k2 * n + k2 - 1]; v[1] = h[(k2 + 1) * n + k2 - 1]; }                                   \
        T t1 = P##_hq_larfg(2, v, 1), v2 = v[1];                                                                      \
        if (k2 > m) { h[k2 * n + k2 - 1] = v[0]; h[(k2 + 1) * n + k2 - 1] = zero; }                                   \
        T ct1 = P##_conj(t1), cv2 = P##_conj(v2);                                                                     \
        R t2 = P##_re(P##_mul(t1, v2));                                                                               \
        for (int64_t j = k2; j < n; ++j) {                                                                            \
          T s = P##_add(P##_mul(ct1, h[k2 * n + j]), P##_rmul(h[(k2 + 1) * n + j], t2));                              \
          h[k2 * n + j] = P##_sub(h[k2 * n + j], s);                                                                  \
          h[(k2 + 1) * n + j] = P##_sub(h[(k2 + 1) * n + j], P##_mul(s, v2));                                         \
        }                                                                                                             \
        int64_t top = k2 + 2 < i ? k2 + 2 : i;                                                                        \
        for (int64_t j = 0; j <= top; ++j) {                                                                          \
          T s = P##_add(P##_mul(t1, h[j * n + k2]), P##_rmul(h[j * n + k2 + 1], t2));                                 \
          h[j * n + k2] = P##_sub(h[j * n + k2], s);                                                                  \
          h[j * n + k2 + 1] = P##_sub(h[j * n + k2 + 1], P##_mul(s, cv2));                                            \
        }                                                                                                             \
        for (int64_t j = 0; j < n; ++j) {                                                                             \
          T s = P##_add(P##_mul(t1, z[j * n + k2]), P##_rmul(z[j * n + k2 + 1], t2));                                 \
          z[j * n + k2] = P##_sub(z[j * n + k2], s);                                                                  \
          z[j * n + k2 + 1] = P##_sub(z[j * n + k2 + 1], P##_mul(s, cv2));                                            \
        }                                                                                                             \
        if (k2 == m && m > l) { /* the step made h[m][m-1] nonreal: a diagonal similarity restores it */              \
          T tmp = P##_sub(P##_mk((R)1, (R)0), t1);                                                                    \
          tmp = P##_rmul(tmp, (R)1 / P##_abs(tmp));                                                                   \
          T ctmp = P##_conj(tmp);                                                                                     \
          h[(m + 1) * n + m] = P##_mul(h[(m + 1) * n + m], ctmp);                                                     \
          if (m + 2 <= i) h[(m + 2) * n + m + 1] = P##_mul(h[(m + 2) * n + m + 1], tmp);                              \
          for (int64_t j = m; j <= i; ++j) {                                                                          \
            if (j == m + 1) continue;                                                                                 \
            for (int64_t c = j + 1; c < n; ++c) h[j * n + c] = P##_mul(h[j * n + c], tmp);                            \
            for (int64_t r = 0; r < j; ++r) h[r * n + j] = P##_mul(h[r * n + j], ctmp);                               \
            for (int64_t r = 0; r < n; ++r) z[r * n + j] = P##_mul(z[r * n + j], ctmp);                               \
          }                                                                                                           \
        }                                                                                                             \
      }                                                                                                               \
      P##_real_subdiag(n, h, z, i);                                                                                   \
    }                                                                                                                 \
    if (!done) return (int32_t)(i + 1);                                                                               \
    w[i] = h[i * n + i];                                                                                              \
    --i;                                                                                                              \
  }                                                                                                                   \
  return 0;                                                                                                           \
}                                                                                                                     \
AOTC__LA_LAQR_CPLX(P, T, R)                                                                                           \
                                                                                                                      \
/* zgeev's normalization of the column c of the n x n row-major v: unit 2-norm, then the component of largest         \
   modulus made real (and non-negative); with `real`, only the unit norm (dgeev's, of a real eigenvalue's vector).    \
   ph (not NULL): dgeev's for a complex pair's vector, v being ph times ?trevc's (times a positive number): that      \
   component is made real with the sign of ?trevc's real part there (?lartg's r), so it may be negative. */           \
AOTC_INLINE void P##_normalize(int64_t n, T* v, int64_t c, int real, const T* ph) {                                   \
  R amax = (R)0;                                                                                                      \
  for (int64_t r = 0; r < n; ++r) { R a = P##_abs(v[r * n + c]); amax = a > amax ? a : amax; }                        \
  if (amax == (R)0) return;                                                                                           \
  R ss = (R)0;                                                                                                        \
  for (int64_t r = 0; r < n; ++r) ss += P##_abs2(P##_rmul(v[r * n + c], (R)1 / amax));                                \
  R scl = (R)1 / (amax * P##_sqrt(ss));                                                                               \
  int64_t best = 0;                                                                                                   \
  R bv = (R)-1;                                                                                                       \
  for (int64_t r = 0; r < n; ++r) {                                                                                   \
    v[r * n + c] = P##_rmul(v[r * n + c], scl);                                                                       \
    R a = P##_abs2(v[r * n + c]);                                                                                     \
    if (a > bv) { bv = a; best = r; }                                                                                 \
  }                                                                                                                   \
  if (real) return;                                                                                                   \
  R sgn = (R)1;                                                                                                       \
  if (ph && P##_re(P##_mul(v[best * n + c], P##_conj(*ph))) < (R)0) sgn = (R)-1;                                      \
  T rot = P##_rmul(P##_conj(v[best * n + c]), sgn / P##_sqrt(bv));                                                    \
  for (int64_t r = 0; r < n; ++r) v[r * n + c] = P##_mul(v[r * n + c], rot);                                          \
  v[best * n + c] = P##_mk(P##_re(v[best * n + c]), (R)0);                                                            \
}                                                                                                                     \
                                                                                                                      \
/* Eigenvectors of the Schur form t (as ?trevc, then back-transformed by z, by ?gebak when sc is not NULL, and        \
   normalized): right ones into vr (column k for w[k]) when `right`, left ones (u^H A = w[k] u^H) into vl when        \
   `left`.  wi: a real matrix's imaginary parts (NULL for a complex one): a real eigenvalue's vector keeps its sign.  \
   ph: a real matrix's complex pairs, the phases of these vectors against dtrevc's (right ones at [k], left ones at   \
   [n + k]; P##_normalize), NULL for a complex matrix.  x: n scratch. */                                              \
AOTC_INLINE void P##_trevc(int left, int right, int64_t n, const T* t, const T* z, T* vl, T* vr, T* x, const R* sc,   \
                           int64_t ilo, int64_t ihi, const R* wi, const T* ph) {                                      \
  const R ulp = P##_eps(), smlnum = P##_sfmin() * ((R)n / ulp);                                                       \
  for (int64_t k = 0; k < n; ++k) {                                                                                   \
    T lam = t[k * n + k];                                                                                             \
    R smin = ulp * P##_abs1(lam);                                                                                     \
    smin = smin > smlnum ? smin : smlnum;                                                                             \
    if (right) { /* (T - lam) x = 0, x[k] = 1, x[k+1..] = 0 */                                                        \
      for (int64_t j = 0; j < k; ++j) x[j] = P##_sub(P##_mk((R)0, (R)0), t[j * n + k]);                               \
      x[k] = P##_mk((R)1, (R)0);                                                                                      \
      for (int64_t j = k - 1; j >= 0; --j) {                                                                          \
        T d = P##_sub(t[j * n + j], lam);                                                                             \
        if (P##_abs1(d) < smin) d = P##_mk(smin, (R)0);                                                               \
        x[j] = P##_div(x[j], d);                                                                                      \
        for (int64_t i = 0; i < j; ++i) x[i] = P##_sub(x[i], P##_mul(t[i * n + j], x[j]));                            \
      }                                                                                                               \
      for (int64_t r = 0; r < n; ++r) {                                                                               \
        T s = P##_mk((R)0, (R)0);                                                                                     \
        for (int64_t j = 0; j <= k; ++j) s = P##_add(s, P##_mul(z[r * n + j], x[j]));                                 \
        vr[r * n + k] = s;                                                                                            \
      }                                                                                                               \
      if (sc) P##_gebak(0, n, vr, k, sc, ilo, ihi);                                                                   \
      P##_normalize(n, vr, k, wi && wi[k] == (R)0, ph && wi[k] > (R)0 ? ph + k : NULL);                               \
    }                                                                                                                 \
    if (left) { /* (T - lam)^H y = 0, y[k] = 1, y[..k) = 0 */                                                         \
      x[k] = P##_mk((R)1, (R)0);                                                                                      \
      for (int64_t j = k + 1; j < n; ++j) x[j] = P##_sub(P##_mk((R)0, (R)0), P##_conj(t[k * n + j]));                 \
      for (int64_t j = k + 1; j < n; ++j) {                                                                           \
        T d = P##_conj(P##_sub(t[j * n + j], lam));                                                                   \
        if (P##_abs1(d) < smin) d = P##_mk(smin, (R)0);                                                               \
        x[j] = P##_div(x[j], d);                                                                                      \
        for (int64_t i = j + 1; i < n; ++i) x[i] = P##_sub(x[i], P##_mul(P##_conj(t[j * n + i]), x[j]));              \
      }                                                                                                               \
      for (int64_t r = 0; r < n; ++r) {                                                                               \
        T s = P##_mk((R)0, (R)0);                                                                                     \
        for (int64_t j = k; j < n; ++j) s = P##_add(s, P##_mul(z[r * n + j], x[j]));                                  \
        vl[r * n + k] = s;                                                                                            \
      }                                                                                                               \
      if (sc) P##_gebak(1, n, vl, k, sc, ilo, ihi);                                                                   \
      P##_normalize(n, vl, k, wi && wi[k] == (R)0, ph && wi[k] > (R)0 ? ph + n + k : NULL);                           \
    }                                                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* The general eigenproblem (?geev) of the n x n matrix already copied into h (row-major; overwritten): w the         \
   eigenvalues, vl/vr (when asked; zeros otherwise) the normalized left/right eigenvectors as columns, *info 0        \
   or the 1-based index of an eigenvalue that did not converge (LAPACK's info; the outputs are then NaN).             \
   work: n*n + 2n + AOTC_LA_LAQR_C_WORK(n) elements (z, x, the balancing's scale, P##_hseqr's). */                    \
AOTC_INLINE void P##_geev_core(int left, int right, int64_t n, T* h, T* w, T* vl, T* vr, int32_t* info, T* work) {    \
  T* z = work;                                                                                                        \
  T* x = work + n * n;                                                                                                \
  R* sc = (R*)(work + n * n + n);                                                                                     \
  int64_t ilo, ihi;                                                                                                   \
  P##_gebal(1, 1, n, h, sc, &ilo, &ihi); /* ?geev balances: permutes and scales */                                    \
  P##_hessenberg(n, h, z, x);                                                                                         \
  *info = P##_hseqr(n, ilo, ihi, h, z, w, work + n * n + 2 * n);                                                      \
  if (!left) memset(vl, 0, (size_t)(n * n) * sizeof(T));                                                              \
  if (!right) memset(vr, 0, (size_t)(n * n) * sizeof(T));                                                             \
  if (*info != 0) {                                                                                                   \
    T nan = P##_mk((R)NAN, (R)NAN);                                                                                   \
    for (int64_t i = 0; i < n; ++i) w[i] = nan;                                                                       \
    for (int64_t i = 0; i < n * n; ++i) { if (left) vl[i] = nan; if (right) vr[i] = nan; }                            \
    return;                                                                                                           \
  }                                                                                                                   \
  P##_trevc(left, right, n, h, z, vl, vr, x, sc, ilo, ihi, NULL, NULL);                                               \
}                                                                                                                     \
                                                                                                                      \
AOTC_RT_API void P##_geev(int left, int right, int64_t n, const T* src, T* w, T* vl, T* vr, int32_t* info,            \
                          T* work) {                                                                                  \
  T* h = work;                                                                                                        \
  if (n > 0) memcpy(h, src, (size_t)(n * n) * sizeof(T));                                                             \
  const R anrm = P##_lange_max(AOTC_LA_ALL, n, n, h, n), cscale = P##_drv_scale(anrm);                                \
  if (cscale != (R)0) P##_lascl(AOTC_LA_ALL, anrm, cscale, n, n, h, n); /* zgeev's scaling */                         \
  P##_geev_core(left, right, n, h, w, vl, vr, info, work + n * n);                                                    \
  if (cscale != (R)0 && *info == 0) P##_lascl(AOTC_LA_ALL, cscale, anrm, n, 1, w, 1);                                 \
}                                                                                                                     \
                                                                                                                      \
/* The complex Schur decomposition (?gees, no sorting): A = Z T Z^H, t upper triangular, z unitary (zeros unless      \
   `vectors`), w = diag(T), *sdim = 0, *info as ?geev's.  work: n*n + 2n + AOTC_LA_LAQR_C_WORK(n) elements (the       \
   QR's Z, a vector, ?gebal's permutation, P##_hseqr's). */                                                           \
AOTC_RT_API void P##_gees(int vectors, int64_t n, const T* src, T* t, T* z, T* w, int32_t* sdim, int32_t* info,       \
                          T* work) {                                                                                  \
  if (n > 0 && t != src) memcpy(t, src, (size_t)(n * n) * sizeof(T));                                                 \
  R* sc = (R*)(work + n * n + n);                                                                                     \
  int64_t ilo, ihi;                                                                                                   \
  const R anrm = P##_lange_max(AOTC_LA_ALL, n, n, t, n), cscale = P##_drv_scale(anrm);                                \
  if (cscale != (R)0) P##_lascl(AOTC_LA_ALL, anrm, cscale, n, n, t, n); /* zgees's scaling */                         \
  P##_gebal(1, 0, n, t, sc, &ilo, &ihi); /* ?gees permutes (no scaling), then moves the vectors back */               \
  P##_hessenberg(n, t, work, work + n * n);                                                                           \
  *info = P##_hseqr(n, ilo, ihi, t, work, w, work + n * n + 2 * n);                                                   \
  *sdim = 0;                                                                                                          \
  if (n <= 0) return;                                                                                                 \
  P##_gees_vectors(vectors, n, z, work, sc, ilo, ihi);                                                                \
  if (cscale != (R)0) { /* T back to A's scale, the eigenvalues read from it again */                                 \
    P##_lascl(AOTC_LA_UPPER, cscale, anrm, n, n, t, n);                                                               \
    for (int64_t i = 0; i < n; ++i) w[i] = t[i * n + i];                                                              \
  }                                                                                                                   \
}

/* GCC would vectorize complex products into fused multiply-add/subtract (see aotc_linalg.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("no-tree-vectorize")
#endif
AOTC__LA_GEEV(aotc_la_c, aotc_c64, float)
AOTC__LA_GEEV(aotc_la_z, aotc_c128, double)

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#endif /* AOTC_GEEV_C */
