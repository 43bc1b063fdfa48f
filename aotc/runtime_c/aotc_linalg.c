/* aotc_linalg.c -- dense linear algebra of the LAPACK custom calls XLA:CPU runs (jaxlib's
 * lapack_*_ffi targets) and of the cholesky and triangular-solve ops: LU with partial
 * pivoting, Cholesky, triangular solve, Householder QR and its Q, Hermitian eigenvalues and
 * singular values by Jacobi rotations.  Matrices are row-major (the logical matrix, whatever
 * layout XLA gave the buffer); one call handles one matrix of a batch.  Every routine is
 * written once (AOTC__LA_DEFINE) and instantiated for f32, f64, c64 and c128 (aotc_la_s,
 * _d, _c, _z), with the scalar helpers of aotc_linalg.h.  Unblocked algorithms whose inner
 * loops run along rows, so the O(n^3) work streams through memory.
 */
#ifndef AOTC_LINALG_H
#include "aotc_linalg.h"
#endif
#ifndef AOTC_NARROW_H
#include "aotc_narrow.h"
#endif
#include <math.h>
#include <stdint.h>
#include <string.h>

#define AOTC__LA_DEFINE(P, T, R) \
/* Copy n elements unless the kernel works in place. */                                                               \
AOTC_INLINE void P##_copy(T* dst, const T* src, int64_t n) {                                                          \
  if (dst != src && n > 0) memcpy(dst, src, (size_t)n * sizeof(T));                                                   \
}                                                                                                                     \
                                                                                                                      \
/* sqrt(x^2 + y^2 + z^2) without overflow (LAPACK's ?lapy3). */                                                       \
AOTC_INLINE R P##_lapy3(R x, R y, R z) {                                                                              \
  R ax = P##_fabs(x), ay = P##_fabs(y), az = P##_fabs(z);                                                             \
  R w = ax > ay ? ax : ay;                                                                                            \
  w = w > az ? w : az;                                                                                                \
  if (w == (R)0) return ax + ay + az;                                                                                 \
  ax /= w; ay /= w; az /= w;                                                                                          \
  return w * P##_sqrt(ax * ax + ay * ay + az * az);                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* LU factorization with partial pivoting (?getrf), a m x n row-major: L (unit, below the                             \
   diagonal) and U overwrite a; ipiv[j] is the 1-based row swapped with row j (the first row                          \
   of largest |re|+|im| in column j); *info is the 1-based index of the first exactly zero                            \
   pivot, or 0. */                                                                                                    \
AOTC_RT_API void P##_getrf(int64_t m, int64_t n, const T* src, T* a, int32_t* ipiv, int32_t* info) {                  \
  int64_t k = m < n ? m : n;                                                                                          \
  P##_copy(a, src, m * n);                                                                                            \
  *info = 0;                                                                                                          \
  for (int64_t j = 0; j < k; ++j) {                                                                                   \
    int64_t p = j;                                                                                                    \
    R best = P##_abs1(a[j * n + j]);                                                                                  \
    for (int64_t i = j + 1; i < m; ++i) {                                                                             \
      R v = P##_abs1(a[i * n + j]);                                                                                   \
      if (v > best) { best = v; p = i; }                                                                              \
    }                                                                                                                 \
    ipiv[j] = (int32_t)(p + 1);                                                                                       \
    if (!P##_iszero(a[p * n + j])) {                                                                                  \
      if (p != j) {                                                                                                   \
        for (int64_t c = 0; c < n; ++c) {                                                                             \
          T t = a[j * n + c];                                                                                         \
          a[j * n + c] = a[p * n + c];                                                                                \
          a[p * n + c] = t;                                                                                           \
        }                                                                                                             \
      }                                                                                                               \
      T piv = a[j * n + j];                                                                                           \
      if (P##_abs(piv) >= P##_sfmin()) {                                                                              \
        T r = P##_div(P##_mk((R)1, (R)0), piv);                                                                       \
        for (int64_t i = j + 1; i < m; ++i) a[i * n + j] = P##_mul(a[i * n + j], r);                                  \
      } else {                                                                                                        \
        for (int64_t i = j + 1; i < m; ++i) a[i * n + j] = P##_div(a[i * n + j], piv);                                \
      }                                                                                                               \
    } else if (*info == 0) {                                                                                          \
      *info = (int32_t)(j + 1);                                                                                       \
    }                                                                                                                 \
    for (int64_t i = j + 1; i < m; ++i) {                                                                             \
      T l = a[i * n + j];                                                                                             \
      T* row = a + i * n;                                                                                             \
      const T* top = a + j * n;                                                                                       \
      for (int64_t c = j + 1; c < n; ++c) row[c] = P##_sub(row[c], P##_mul(l, top[c]));                               \
    }                                                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* Cholesky factorization (?potrf) of the Hermitian n x n matrix in the `lower` (else upper)                          \
   triangle: L with A = L L^H (else U with A = U^H U) overwrites that triangle; the other one                         \
   is left as it was.  *info is the 1-based order of the first leading minor that is not                              \
   positive definite (its diagonal entry then holds the non-positive value), or 0.  The upper                         \
   case is the lower one on the transposed view. */                                                                   \
AOTC_RT_API void P##_potrf(int lower, int64_t n, const T* src, T* a, int32_t* info) {                                 \
  int64_t rs = lower ? n : 1, cs = lower ? 1 : n;                                                                     \
  P##_copy(a, src, n * n);                                                                                            \
  *info = 0;                                                                                                          \
  for (int64_t j = 0; j < n; ++j) {                                                                                   \
    R d = P##_re(a[j * rs + j * cs]);                                                                                 \
    for (int64_t k = 0; k < j; ++k) d -= P##_abs2(a[j * rs + k * cs]);                                                \
    if (!(d > (R)0)) {                                                                                                \
      a[j * rs + j * cs] = P##_mk(d, (R)0);                                                                           \
      *info = (int32_t)(j + 1);                                                                                       \
      return;                                                                                                         \
    }                                                                                                                 \
    d = P##_sqrt(d);                                                                                                  \
    a[j * rs + j * cs] = P##_mk(d, (R)0);                                                                             \
    R r = (R)1 / d;                                                                                                   \
    for (int64_t i = j + 1; i < n; ++i) {                                                                             \
      T s = a[i * rs + j * cs];                                                                                       \
      for (int64_t k = 0; k < j; ++k) s = P##_sub(s, P##_mul(a[i * rs + k * cs], P##_conj(a[j * rs + k * cs])));      \
      a[i * rs + j * cs] = P##_rmul(s, r);                                                                            \
    }                                                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* The cholesky HLO op as XLA:CPU computes it: the factor with the other triangle zero, or                            \
   every element NaN (complex: NaN + 0i) when the matrix is not positive definite. */                                 \
AOTC_RT_API void P##_cholesky(int lower, int64_t n, const T* src, T* a) {                                             \
  int32_t info = 0;                                                                                                   \
  P##_potrf(lower, n, src, a, &info);                                                                                 \
  for (int64_t i = 0; i < n; ++i)                                                                                     \
    for (int64_t j = 0; j < n; ++j) {                                                                                 \
      if (info != 0) a[i * n + j] = P##_mk((R)NAN, (R)0); /* complex: NaN + 0i, as XLA */                             \
      else if (lower ? j > i : j < i) a[i * n + j] = P##_mk((R)0, (R)0);                                              \
    }                                                                                                                 \
}                                                                                                                     \
                                                                                                                      \
/* Triangular solve (?trsm with alpha 1): X overwrites b (m x n), solving op(A) X = B when                            \
   `left` (A m x m) or X op(A) = B (A n x n); A is `lower` (else upper) triangular, its                               \
   diagonal taken as ones when `unit`; op is trans 0: A, 1: A^T, 2: A^H.  As the optimized                            \
   BLAS XLA:CPU calls (not the reference ?trsm), zeros are not skipped and the diagonal is                            \
   applied as its reciprocal, so a zero pivot gives the infinities and NaNs XLA gives. */                             \
AOTC_RT_API void P##_trsm(int left, int lower, int trans, int unit, int64_t m, int64_t n, const T* a,                 \
                          const T* bsrc, T* b) {                                                                      \
  int64_t k = left ? m : n;                                                                                           \
  int64_t ars = trans ? 1 : k, acs = trans ? k : 1; /* op(A)(i, j) is a[i * ars + j * acs] */                         \
  int low = trans ? !lower : lower;                 /* op(A) lower triangular */                                      \
  int cj = trans == 2;                                                                                                \
  P##_copy(b, bsrc, m * n);                                                                                           \
  if (left) {                                                                                                         \
    for (int64_t s = 0; s < m; ++s) {                                                                                 \
      int64_t i = low ? s : m - 1 - s; /* rows in the order they are solved */                                        \
      T* xi = b + i * n;                                                                                              \
      for (int64_t t = 0; t < s; ++t) {                                                                               \
        int64_t q = low ? t : m - 1 - t;                                                                              \
        T aiq = a[i * ars + q * acs];                                                                                 \
        if (cj) aiq = P##_conj(aiq);                                                                                  \
        const T* xq = b + q * n;                                                                                      \
        for (int64_t c = 0; c < n; ++c) xi[c] = P##_sub(xi[c], P##_mul(aiq, xq[c]));                                  \
      }                                                                                                               \
      if (!unit) {                                                                                                    \
        T d = a[i * ars + i * acs];                                                                                   \
        if (cj) d = P##_conj(d);                                                                                      \
        T r = P##_div(P##_mk((R)1, (R)0), d);                                                                         \
        for (int64_t c = 0; c < n; ++c) xi[c] = P##_mul(r, xi[c]);                                                    \
      }                                                                                                               \
    }                                                                                                                 \
    return;                                                                                                           \
  }                                                                                                                   \
  for (int64_t r = 0; r < m; ++r) {                                                                                   \
    T* x = b + r * n;                                                                                                 \
    for (int64_t s = 0; s < n; ++s) {                                                                                 \
      int64_t j = low ? n - 1 - s : s; /* upper: columns ascending; lower: descending */                              \
      T acc = x[j];                                                                                                   \
      for (int64_t t = 0; t < s; ++t) {                                                                               \
        int64_t q = low ? n - 1 - t : t;                                                                              \
        T aqj = a[q * ars + j * acs];                                                                                 \
        if (cj) aqj = P##_conj(aqj);                                                                                  \
        acc = P##_sub(acc, P##_mul(aqj, x[q]));                                                                       \
      }                                                                                                               \
      if (!unit) {                                                                                                    \
        T d = a[j * ars + j * acs];                                                                                   \
        if (cj) d = P##_conj(d);                                                                                      \
        acc = P##_mul(P##_div(P##_mk((R)1, (R)0), d), acc);                                                           \
      }                                                                                                               \
      x[j] = acc;                                                                                                     \
    }                                                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* Apply I - t v v^H from the left to rows i.. of columns c0..n-1 of a (m x n), v being column                        \
   i of a from row i down with v[0] = 1 (?larf); work holds n elements. */                                            \
AOTC_INLINE void P##_larf_left(int64_t m, int64_t n, T* a, int64_t i, int64_t c0, T t, T* work) {                     \
  if (P##_iszero(t) || c0 >= n) return;                                                                               \
  for (int64_t c = c0; c < n; ++c) work[c] = a[i * n + c];                                                            \
  for (int64_t r = i + 1; r < m; ++r) {                                                                               \
    T vr = P##_conj(a[r * n + i]);                                                                                    \
    const T* row = a + r * n;                                                                                         \
    for (int64_t c = c0; c < n; ++c) work[c] = P##_add(work[c], P##_mul(vr, row[c]));                                 \
  }                                                                                                                   \
  for (int64_t c = c0; c < n; ++c) a[i * n + c] = P##_sub(a[i * n + c], P##_mul(t, work[c]));                         \
  for (int64_t r = i + 1; r < m; ++r) {                                                                               \
    T f = P##_mul(t, a[r * n + i]);                                                                                   \
    T* row = a + r * n;                                                                                               \
    for (int64_t c = c0; c < n; ++c) row[c] = P##_sub(row[c], P##_mul(f, work[c]));                                   \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* Householder QR (?geqrf): R on and above the diagonal of a (m x n), the reflectors' vectors                         \
   below it (v[0] = 1 implied) and their scales in tau (min(m, n)), with LAPACK's conventions                         \
   (?larfg: beta = -sign(re alpha) |(alpha, x)|, tau = (beta - alpha) / beta). */                                     \
AOTC_RT_API void P##_geqrf(int64_t m, int64_t n, const T* src, T* a, T* tau, T* work) {                               \
  int64_t k = m < n ? m : n;                                                                                          \
  P##_copy(a, src, m * n);                                                                                            \
  for (int64_t i = 0; i < k; ++i) {                                                                                   \
    T alpha = a[i * n + i];                                                                                           \
    R amax = 0, ss = 0, xnorm = 0;                                                                                    \
    for (int64_t r = i + 1; r < m; ++r) {                                                                             \
      R v = P##_fabs(P##_re(a[r * n + i])), w = P##_fabs(P##_im(a[r * n + i]));                                       \
      amax = v > amax ? v : amax;                                                                                     \
      amax = w > amax ? w : amax;                                                                                     \
    }                                                                                                                 \
    if (amax > (R)0) {                                                                                                \
      for (int64_t r = i + 1; r < m; ++r) ss += P##_abs2(P##_rmul(a[r * n + i], (R)1 / amax));                        \
      xnorm = amax * P##_sqrt(ss);                                                                                    \
    }                                                                                                                 \
    R ar = P##_re(alpha), ai = P##_im(alpha);                                                                         \
    if (xnorm == (R)0 && ai == (R)0) {                                                                                \
      tau[i] = P##_mk((R)0, (R)0);                                                                                    \
    } else {                                                                                                          \
      R beta = P##_lapy3(ar, ai, xnorm);                                                                              \
      beta = ar >= (R)0 ? -beta : beta;                                                                               \
      tau[i] = P##_mk((beta - ar) / beta, -ai / beta);                                                                \
      T scal = P##_div(P##_mk((R)1, (R)0), P##_sub(alpha, P##_mk(beta, (R)0)));                                       \
      for (int64_t r = i + 1; r < m; ++r) a[r * n + i] = P##_mul(a[r * n + i], scal);                                 \
      a[i * n + i] = P##_mk(beta, (R)0);                                                                              \
    }                                                                                                                 \
    P##_larf_left(m, n, a, i, i + 1, P##_conj(tau[i]), work);                                                         \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* The first n columns of Q = H(0) ... H(k-1) from ?geqrf's reflectors (?orgqr): a is m x n                           \
   with the vectors in its first k columns; Q overwrites it. */                                                       \
AOTC_RT_API void P##_orgqr(int64_t m, int64_t n, int64_t k, const T* src, T* a, const T* tau, T* work) {              \
  P##_copy(a, src, m * n);                                                                                            \
  for (int64_t r = 0; r < m; ++r)                                                                                     \
    for (int64_t c = k; c < n; ++c) a[r * n + c] = P##_mk(r == c ? (R)1 : (R)0, (R)0);                                \
  for (int64_t i = k - 1; i >= 0; --i) {                                                                              \
    if (i < n - 1) {                                                                                                  \
      a[i * n + i] = P##_mk((R)1, (R)0);                                                                              \
      P##_larf_left(m, n, a, i, i + 1, tau[i], work);                                                                 \
    }                                                                                                                 \
    T nt = P##_sub(P##_mk((R)0, (R)0), tau[i]);                                                                       \
    for (int64_t r = i + 1; r < m; ++r) a[r * n + i] = P##_mul(a[r * n + i], nt);                                     \
    a[i * n + i] = P##_sub(P##_mk((R)1, (R)0), tau[i]);                                                               \
    for (int64_t r = 0; r < i; ++r) a[r * n + i] = P##_mk((R)0, (R)0);                                                \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* Sort idx[0..n) by key, ascending (`up`) or descending, stably (insertion: n is small). */                          \
AOTC_INLINE void P##_order(int64_t n, const R* key, int64_t* idx, int up) {                                           \
  for (int64_t i = 0; i < n; ++i) idx[i] = i;                                                                         \
  for (int64_t i = 1; i < n; ++i) {                                                                                   \
    int64_t v = idx[i], j = i;                                                                                        \
    while (j > 0 && (up ? key[idx[j - 1]] > key[v] : key[idx[j - 1]] < key[v])) {                                     \
      idx[j] = idx[j - 1];                                                                                            \
      --j;                                                                                                            \
    }                                                                                                                 \
    idx[j] = v;                                                                                                       \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* Householder vector of ?larfg for x = (alpha, rest) with rest at x[stride], ... (len - 1                            \
   entries): rest := v[1..] in place, *beta the new alpha, returns tau. */                                            \
AOTC_INLINE T P##_larfg(int64_t len, T alpha, T* x, int64_t stride, R* beta) {                                        \
  R amax = 0, ss = 0, xnorm = 0;                                                                                      \
  for (int64_t r = 1; r < len; ++r) {                                                                                 \
    R v = P##_fabs(P##_re(x[r * stride])), u = P##_fabs(P##_im(x[r * stride]));                                       \
    amax = v > amax ? v : amax;                                                                                       \
    amax = u > amax ? u : amax;                                                                                       \
  }                                                                                                                   \
  if (amax > (R)0) {                                                                                                  \
    for (int64_t r = 1; r < len; ++r) ss += P##_abs2(P##_rmul(x[r * stride], (R)1 / amax));                           \
    xnorm = amax * P##_sqrt(ss);                                                                                      \
  }                                                                                                                   \
  R ar = P##_re(alpha), ai = P##_im(alpha);                                                                           \
  if (xnorm == (R)0 && ai == (R)0) {                                                                                  \
    *beta = ar;                                                                                                       \
    return P##_mk((R)0, (R)0);                                                                                        \
  }                                                                                                                   \
  R b = P##_lapy3(ar, ai, xnorm);                                                                                     \
  b = ar >= (R)0 ? -b : b;                                                                                            \
  T scal = P##_div(P##_mk((R)1, (R)0), P##_sub(alpha, P##_mk(b, (R)0)));                                              \
  for (int64_t r = 1; r < len; ++r) x[r * stride] = P##_mul(x[r * stride], scal);                                     \
  *beta = b;                                                                                                          \
  return P##_mk((b - ar) / b, -ai / b);                                                                               \
}                                                                                                                     \
                                                                                                                      \
/* Hermitian eigendecomposition (?syevd / ?heevd): Householder reduction to a real                                    \
   tridiagonal matrix (?hetd2), then implicit QL iterations with Wilkinson's shift (the                               \
   EISPACK tql2 scheme); eigenvalues ascending in w; with `vectors`, the unit eigenvectors as                         \
   the columns of a (n x n).  The matrix is read from its `lower` (else upper) triangle.                              \
   work: 2 n^2 + 2 n elements, e n reals, iwork n.  *info is 1 when the iteration did not                             \
   converge (a NaN input), else 0. */                                                                                 \
AOTC_RT_API void P##_syevd(int vectors, int lower, int64_t n, const T* src, T* a, R* w, int32_t* info,                \
                           T* work, R* e, int64_t* iwork) {                                                           \
  T* h = work;          /* n x n: the matrix; reflectors below the subdiagonal */                                     \
  T* z = work + n * n;  /* n x n: rows are the eigenvectors (transposed) */                                           \
  T* tau = z + n * n;   /* n */                                                                                       \
  T* p = tau + n;       /* n */                                                                                       \
  R* d = w;                                                                                                           \
  for (int64_t i = 0; i < n; ++i)                                                                                     \
    for (int64_t j = 0; j < n; ++j) {                                                                                 \
      int mine = lower ? i >= j : i <= j;                                                                             \
      h[i * n + j] = mine ? src[i * n + j] : P##_conj(src[j * n + i]);                                                \
      if (i == j) h[i * n + j] = P##_mk(P##_re(src[i * n + i]), (R)0);                                                \
    }                                                                                                                 \
  /* dsyevd's scaling of a matrix whose largest magnitude is below sqrt(safmin / eps) or above its inverse */         \
  const R rmin = P##_sqrt(P##_sfmin() / P##_eps()), rmax = P##_sqrt((R)1 / (P##_sfmin() / P##_eps()));                \
  const R anrm = P##_lange_max(AOTC_LA_ALL, n, n, h, n);                                                              \
  const R sigma = anrm > (R)0 && anrm < rmin ? rmin / anrm : anrm > rmax ? rmax / anrm : (R)0;                        \
  if (sigma != (R)0) P##_lascl(AOTC_LA_ALL, (R)1, sigma, n, n, h, n);                                                 \
  *info = 0;                                                                                                          \
  for (int64_t k = 0; k + 1 < n; ++k) { /* H_k^H A H_k, v in column k from row k + 1 */                               \
    R beta;                                                                                                           \
    int64_t k1 = k + 1, len = n - k1;                                                                                 \
    T t = P##_larfg(len, h[k1 * n + k], h + k1 * n + k, n, &beta);                                                    \
    tau[k] = t;                                                                                                       \
    e[k] = beta;                                                                                                      \
    if (P##_iszero(t)) continue;                                                                                      \
    h[k1 * n + k] = P##_mk((R)1, (R)0);                                                                               \
    T pv = P##_mk((R)0, (R)0);                                                                                        \
    for (int64_t i = k1; i < n; ++i) { /* p = tau A22 v */                                                            \
      T acc = P##_mk((R)0, (R)0);                                                                                     \
      const T* row = h + i * n;                                                                                       \
      for (int64_t j = k1; j < n; ++j) acc = P##_add(acc, P##_mul(row[j], h[j * n + k]));                             \
      p[i] = P##_mul(t, acc);                                                                                         \
      pv = P##_add(pv, P##_mul(P##_conj(p[i]), h[i * n + k]));                                                        \
    }                                                                                                                 \
    T al = P##_mul(P##_mk((R)-0.5, (R)0), P##_mul(t, pv));                                                            \
    for (int64_t i = k1; i < n; ++i) p[i] = P##_add(p[i], P##_mul(al, h[i * n + k]));                                 \
    for (int64_t i = k1; i < n; ++i) { /* A22 -= v p^H + p v^H */                                                     \
      T vi = h[i * n + k], pi = p[i];                                                                                 \
      T* row = h + i * n;                                                                                             \
      for (int64_t j = k1; j < n; ++j)                                                                                \
        row[j] = P##_sub(row[j], P##_add(P##_mul(vi, P##_conj(p[j])), P##_mul(pi, P##_conj(h[j * n + k]))));          \
    }                                                                                                                 \
  }                                                                                                                   \
  for (int64_t i = 0; i < n; ++i) d[i] = P##_re(h[i * n + i]);                                                        \
  if (n > 0) e[n - 1] = 0;                                                                                            \
  if (vectors) { /* Q = H_0 ... H_{n-2} (in a, free until the end), then z = Q^T */                                   \
    for (int64_t r = 0; r < n; ++r)                                                                                   \
      for (int64_t c = 0; c < n; ++c) a[r * n + c] = P##_mk(r == c ? (R)1 : (R)0, (R)0);                              \
    for (int64_t k = n - 2; k >= 0; --k) {                                                                            \
      int64_t k1 = k + 1;                                                                                             \
      T t = tau[k];                                                                                                   \
      if (P##_iszero(t)) continue;                                                                                    \
      h[k1 * n + k] = P##_mk((R)1, (R)0);                                                                             \
      for (int64_t c = k1; c < n; ++c) p[c] = P##_mk((R)0, (R)0);                                                     \
      for (int64_t r = k1; r < n; ++r) {                                                                              \
        T vr = P##_conj(h[r * n + k]);                                                                                \
        const T* row = a + r * n;                                                                                     \
        for (int64_t c = k1; c < n; ++c) p[c] = P##_add(p[c], P##_mul(vr, row[c]));                                   \
      }                                                                                                               \
      for (int64_t r = k1; r < n; ++r) {                                                                              \
        T f = P##_mul(t, h[r * n + k]);                                                                               \
        T* row = a + r * n;                                                                                           \
        for (int64_t c = k1; c < n; ++c) row[c] = P##_sub(row[c], P##_mul(f, p[c]));                                  \
      }                                                                                                               \
    }                                                                                                                 \
    for (int64_t r = 0; r < n; ++r)                                                                                   \
      for (int64_t c = 0; c < n; ++c) z[r * n + c] = a[c * n + r];                                                    \
  }                                                                                                                   \
  R f = 0, tst1 = 0, eps = P##_eps();                                                                                 \
  for (int64_t l = 0; l < n; ++l) {                                                                                   \
    R al = P##_fabs(d[l]) + P##_fabs(e[l]);                                                                           \
    tst1 = al > tst1 ? al : tst1;                                                                                     \
    int64_t m = l;                                                                                                    \
    while (m < n - 1 && !(P##_fabs(e[m]) <= eps * tst1)) ++m;                                                         \
    int iter = 0;                                                                                                     \
    while (m > l) {                                                                                                   \
      if (++iter > 60 || !(tst1 == tst1)) { *info = 1; break; }                                                       \
      R g = d[l];                                                                                                     \
      R q = (d[l + 1] - g) / ((R)2 * e[l]);                                                                           \
      R r = P##_lapy3(q, (R)1, (R)0);                                                                                 \
      if (q < (R)0) r = -r;                                                                                           \
      d[l] = e[l] / (q + r);                                                                                          \
      d[l + 1] = e[l] * (q + r);                                                                                      \
      R dl1 = d[l + 1], hh = g - d[l];                                                                                \
      for (int64_t i = l + 2; i < n; ++i) d[i] -= hh;                                                                 \
      f += hh;                                                                                                        \
      q = d[m];                                                                                                       \
      R c = 1, c2 = 1, c3 = 1, s = 0, s2 = 0, el1 = e[l + 1];                                                         \
      for (int64_t i = m - 1; i >= l; --i) {                                                                          \
        c3 = c2;                                                                                                      \
        c2 = c;                                                                                                       \
        s2 = s;                                                                                                       \
        g = c * e[i];                                                                                                 \
        hh = c * q;                                                                                                   \
        r = P##_lapy3(q, e[i], (R)0);                                                                                 \
        e[i + 1] = s * r;                                                                                             \
        s = e[i] / r;                                                                                                 \
        c = q / r;                                                                                                    \
        q = c * d[i] - s * g;                                                                                         \
        d[i + 1] = hh + s * (c * g + s * d[i]);                                                                       \
        if (vectors) {                                                                                                \
          T* zi = z + i * n;                                                                                          \
          T* zj = z + (i + 1) * n;                                                                                    \
          for (int64_t k = 0; k < n; ++k) {                                                                           \
            T hk = zj[k];                                                                                             \
            zj[k] = P##_add(P##_rmul(zi[k], s), P##_rmul(hk, c));                                                     \
            zi[k] = P##_sub(P##_rmul(zi[k], c), P##_rmul(hk, s));                                                     \
          }                                                                                                           \
        }                                                                                                             \
      }                                                                                                               \
      q = -s * s2 * c3 * el1 * e[l] / dl1;                                                                            \
      e[l] = s * q;                                                                                                   \
      d[l] = c * q;                                                                                                   \
      if (P##_fabs(e[l]) <= eps * tst1) break;                                                                        \
    }                                                                                                                 \
    if (*info) break;                                                                                                 \
    d[l] += f;                                                                                                        \
    e[l] = 0;                                                                                                         \
  }                                                                                                                   \
  if (*info) { /* as LAPACK on failure: no eigenvalues worth keeping */                                               \
    for (int64_t i = 0; i < n; ++i) w[i] = (R)NAN;                                                                    \
    P##_copy(a, src, n * n);                                                                                          \
    return;                                                                                                           \
  }                                                                                                                   \
  if (sigma != (R)0)                                                                                                  \
    for (int64_t i = 0; i < n; ++i) w[i] *= (R)1 / sigma;                                                             \
  P##_order(n, w, iwork, 1);                                                                                          \
  for (int64_t i = 0; i < n; ++i) e[i] = w[iwork[i]];                                                                 \
  for (int64_t i = 0; i < n; ++i) w[i] = e[i];                                                                        \
  if (!vectors) {                                                                                                     \
    P##_copy(a, src, n * n);                                                                                          \
    return;                                                                                                           \
  }                                                                                                                   \
  for (int64_t r = 0; r < n; ++r)                                                                                     \
    for (int64_t c = 0; c < n; ++c) a[r * n + c] = z[iwork[c] * n + r];                                               \
}                                                                                                                     \
                                                                                                                      \
/* Rows from..to-1 of y (each of length q) become unit vectors orthogonal to rows 0..to-1:                            \
   each the unit vector e_k whose part orthogonal to the rows before it is largest, made                              \
   orthogonal by Gram-Schmidt twice. */                                                                               \
AOTC_INLINE void P##_complete(T* y, int64_t from, int64_t to, int64_t q) {                                            \
  for (int64_t j = from; j < to; ++j) {                                                                               \
    T* v = y + j * q;                                                                                                 \
    R bestn = (R)-1;                                                                                                  \
    int64_t best = 0;                                                                                                 \
    for (int64_t e = 0; e < q; ++e) { /* |e_k - sum <e_k, y_i> y_i|^2 = 1 - sum |y_i[k]|^2 */                         \
      R left = (R)1;                                                                                                  \
      for (int64_t i = 0; i < j; ++i) left -= P##_abs2(y[i * q + e]);                                                 \
      if (left > bestn) { bestn = left; best = e; }                                                                   \
    }                                                                                                                 \
    for (int64_t c = 0; c < q; ++c) v[c] = P##_mk(c == best ? (R)1 : (R)0, (R)0);                                     \
    for (int pass = 0; pass < 2; ++pass)                                                                              \
      for (int64_t i = 0; i < j; ++i) {                                                                               \
        T d = P##_mk((R)0, (R)0); /* <v, y_i> */                                                                      \
        for (int64_t c = 0; c < q; ++c) d = P##_add(d, P##_mul(v[c], P##_conj(y[i * q + c])));                        \
        for (int64_t c = 0; c < q; ++c) v[c] = P##_sub(v[c], P##_mul(d, y[i * q + c]));                               \
      }                                                                                                               \
    R nn = 0;                                                                                                         \
    for (int64_t c = 0; c < q; ++c) nn += P##_abs2(v[c]);                                                             \
    nn = (R)1 / P##_sqrt(nn);                                                                                         \
    for (int64_t c = 0; c < q; ++c) v[c] = P##_rmul(v[c], nn);                                                        \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* Singular value decomposition (?gesdd) A = U S V^H of a (m x n) by one-sided Jacobi                                 \
   rotations of the rows of A (m <= n) or of A^H: s descending (min(m, n)); mode 0: values                            \
   only, 1: U m x k and VT k x n (k = min(m, n)), 2: U m x m and VT n x n.  Singular vectors of                       \
   zero singular values, and the rest of a full basis, are completed by Gram-Schmidt.                                 \
   work: p q + p p + q q elements (p = min, q = max(m, n)), rwork p reals, iwork p. */                                \
AOTC_RT_API void P##_gesdd(int mode, int64_t m, int64_t n, const T* src, T* a, R* s, T* u, T* vt,                     \
                           int32_t* info, T* work, R* rwork, int64_t* iwork) {                                        \
  int64_t p = m < n ? m : n, q = m < n ? n : m;                                                                       \
  T* wm = work;         /* p x q: A, or A^H when m > n */                                                             \
  T* g = wm + p * q;    /* p x p: the rotations applied to wm's rows */                                               \
  T* y = g + p * p;     /* q x q: the unit rows of wm, completed */                                                   \
  for (int64_t i = 0; i < p; ++i)                                                                                     \
    for (int64_t j = 0; j < q; ++j) wm[i * q + j] = m <= n ? src[i * n + j] : P##_conj(src[j * n + i]);               \
  for (int64_t i = 0; i < p; ++i)                                                                                     \
    for (int64_t j = 0; j < p; ++j) g[i * p + j] = P##_mk(i == j ? (R)1 : (R)0, (R)0);                                \
  const R anrm = P##_lange_max(AOTC_LA_ALL, p, q, wm, q), cscale = P##_drv_scale(anrm);                               \
  if (cscale != (R)0) P##_lascl(AOTC_LA_ALL, anrm, cscale, p, q, wm, q); /* dgesdd's scaling */                       \
  R tol = P##_eps() * P##_sqrt((R)q);                                                                                 \
  R* nrm = rwork; /* p squared row norms, kept current through the rotations */                                       \
  *info = 1;                                                                                                          \
  for (int sweep = 0; sweep < 60; ++sweep) {                                                                          \
    int rotated = 0;                                                                                                  \
    for (int64_t i = 0; i < p; ++i) {                                                                                 \
      R acc = 0;                                                                                                      \
      for (int64_t c = 0; c < q; ++c) acc += P##_abs2(wm[i * q + c]);                                                 \
      nrm[i] = acc;                                                                                                   \
    }                                                                                                                 \
    for (int64_t i = 0; i < p; ++i)                                                                                   \
      for (int64_t j = i + 1; j < p; ++j) {                                                                           \
        T* wi = wm + i * q;                                                                                           \
        T* wj = wm + j * q;                                                                                           \
        T g0 = P##_mk((R)0, (R)0), g1 = g0, g2 = g0, g3 = g0;                                                         \
        int64_t c = 0;                                                                                                \
        for (; c + 4 <= q; c += 4) { /* four partial sums: independent chains */                                      \
          g0 = P##_add(g0, P##_mul(wi[c], P##_conj(wj[c])));                                                          \
          g1 = P##_add(g1, P##_mul(wi[c + 1], P##_conj(wj[c + 1])));                                                  \
          g2 = P##_add(g2, P##_mul(wi[c + 2], P##_conj(wj[c + 2])));                                                  \
          g3 = P##_add(g3, P##_mul(wi[c + 3], P##_conj(wj[c + 3])));                                                  \
        }                                                                                                             \
        for (; c < q; ++c) g0 = P##_add(g0, P##_mul(wi[c], P##_conj(wj[c])));                                         \
        T ga = P##_add(P##_add(g0, g1), P##_add(g2, g3));                                                             \
        R al = nrm[i], be = nrm[j];                                                                                   \
        R gg = P##_abs(ga);                                                                                           \
        if (!(gg > tol * P##_sqrt(al) * P##_sqrt(be)) || gg == (R)0) continue;                                        \
        rotated = 1;                                                                                                  \
        R zeta = (be - al) / ((R)2 * gg);                                                                             \
        R tt = (R)1 / (P##_fabs(zeta) + P##_sqrt((R)1 + zeta * zeta));                                                \
        if (zeta < (R)0) tt = -tt;                                                                                    \
        R cs = (R)1 / P##_sqrt((R)1 + tt * tt), sn = tt * cs;                                                         \
        T e = P##_rmul(ga, (R)1 / gg);                                                                                \
        for (int64_t k = 0; k < q; ++k) {                                                                             \
          T xi = wi[k], xj = P##_mul(e, wj[k]);                                                                       \
          wi[k] = P##_sub(P##_rmul(xi, cs), P##_rmul(xj, sn));                                                        \
          wj[k] = P##_add(P##_rmul(xi, sn), P##_rmul(xj, cs));                                                        \
        }                                                                                                             \
        nrm[i] = al - tt * gg; /* |w_i|^2 - t |<w_i, w_j>|, |w_j|^2 + t |<w_i, w_j>| */                               \
        nrm[j] = be + tt * gg;                                                                                        \
        nrm[i] = nrm[i] > (R)0 ? nrm[i] : (R)0;                                                                       \
        T* gi = g + i * p;                                                                                            \
        T* gj = g + j * p;                                                                                            \
        for (int64_t k = 0; k < p; ++k) {                                                                             \
          T xi = gi[k], xj = P##_mul(e, gj[k]);                                                                       \
          gi[k] = P##_sub(P##_rmul(xi, cs), P##_rmul(xj, sn));                                                        \
          gj[k] = P##_add(P##_rmul(xi, sn), P##_rmul(xj, cs));                                                        \
        }                                                                                                             \
      }                                                                                                               \
    if (!rotated) { *info = 0; break; }                                                                               \
  }                                                                                                                   \
  R smax = 0;                                                                                                         \
  for (int64_t i = 0; i < p; ++i) {                                                                                   \
    R amax = 0, ss = 0;                                                                                               \
    for (int64_t c = 0; c < q; ++c) {                                                                                 \
      R v = P##_abs(wm[i * q + c]);                                                                                   \
      amax = v > amax ? v : amax;                                                                                     \
    }                                                                                                                 \
    if (amax > (R)0)                                                                                                  \
      for (int64_t c = 0; c < q; ++c) ss += P##_abs2(P##_rmul(wm[i * q + c], (R)1 / amax));                           \
    s[i] = amax * P##_sqrt(ss);                                                                                       \
    smax = s[i] > smax ? s[i] : smax;                                                                                 \
  }                                                                                                                   \
  P##_order(p, s, iwork, 0);                                                                                          \
  for (int64_t i = 0; i < p; ++i) y[i] = P##_mk(s[iwork[i]], (R)0);                                                   \
  for (int64_t i = 0; i < p; ++i) s[i] = P##_re(y[i]);                                                                \
  P##_copy(a, src, m * n);                                                                                            \
  if (mode == 0) {                                                                                                    \
    if (cscale != (R)0) P##_lascl_r(cscale, anrm, p, s);                                                              \
    return;                                                                                                           \
  }                                                                                                                   \
  int64_t cnt = mode == 2 ? q : p, good = 0;                                                                          \
  R floor = smax * P##_eps() * (R)q;                                                                                  \
  for (int64_t i = 0; i < p && s[i] > floor; ++i, ++good) {                                                           \
    R r = (R)1 / s[i];                                                                                                \
    for (int64_t c = 0; c < q; ++c) y[i * q + c] = P##_rmul(wm[iwork[i] * q + c], r);                                 \
  }                                                                                                                   \
  P##_complete(y, good, cnt, q);                                                                                      \
  if (m <= n) { /* U = G^H, VT = Y */                                                                                 \
    for (int64_t r = 0; r < m; ++r)                                                                                   \
      for (int64_t c = 0; c < m; ++c) u[r * m + c] = P##_conj(g[iwork[c] * p + r]);                                   \
    P##_copy(vt, y, cnt * n);                                                                                         \
  } else { /* U = Y^H, VT = G */                                                                                      \
    for (int64_t r = 0; r < m; ++r)                                                                                   \
      for (int64_t c = 0; c < cnt; ++c) u[r * cnt + c] = P##_conj(y[c * q + r]);                                      \
    for (int64_t r = 0; r < n; ++r)                                                                                   \
      for (int64_t c = 0; c < n; ++c) vt[r * n + c] = g[iwork[r] * p + c];                                            \
  }                                                                                                                   \
  if (cscale != (R)0) P##_lascl_r(cscale, anrm, p, s); /* the singular values at A's scale */                         \
}                                                                                                                     

AOTC__LA_DEFINE(aotc_la_s, float, float)
AOTC__LA_DEFINE(aotc_la_d, double, double)
/* GCC (12 at least) vectorizes complex products into fused multiply-add/subtract even under
 * fp-contract=off, so the bits would change with -march: the complex routines are not
 * vectorized. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("no-tree-vectorize")
#endif
AOTC__LA_DEFINE(aotc_la_c, aotc_c64, float)
AOTC__LA_DEFINE(aotc_la_z, aotc_c128, double)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

/* The cholesky HLO op on half types (h: f16, b: bf16; stored as uint16_t) as XLA:CPU's
 * CholeskyExpander writes it for n <= 128 (one unblocked loop, one column a trip), every
 * step rounded to the type as XLA's own f16/bf16 arithmetic rounds it:
 *   d = l l^T (an f32 dot of the widened factor), s = a - round(d), r = 1 / round(sqrt(s_jj)),
 *   column j of l (rows >= j) = round(s r) + 0;  any NaN sqrt makes the whole output NaN.
 * f16 rounds the reciprocal r to f16 (an f16 divide); bf16 keeps it in f32 (XLA's bf16
 * normalization widens the divide and its consumer, the multiply, together).
 * An upper factor is the transpose of the lower factor of the transposed matrix.  `l` is
 * scratch of n * n floats (the factor so far, exact half values). */
#define AOTC__LA_HALF_CHOL(P, TO32, FROM32, ROUND, RROUND, QNAN)                                                      \
AOTC_RT_API void P##_cholesky(int lower, int64_t n, const uint16_t* src, uint16_t* out, float* l) {                   \
  int64_t rs = lower ? n : 1, cs = lower ? 1 : n; /* a(i, j) of the lower problem is src[i * rs + j * cs] */          \
  int bad = 0;                                                                                                        \
  for (int64_t i = 0; i < n * n; ++i) l[i] = 0.0f;                                                                    \
  for (int64_t j = 0; j < n; ++j) {                                                                                   \
    float r = 0.0f;                                                                                                   \
    for (int64_t i = j; i < n; ++i) {                                                                                 \
      float d = 0.0f;                                                                                                 \
      for (int64_t k = 0; k < j; ++k) d += l[i * n + k] * l[j * n + k];                                               \
      float s = ROUND(TO32(src[i * rs + j * cs]) - ROUND(d));                                                         \
      if (i == j) {                                                                                                   \
        float q = ROUND(sqrtf(s));                                                                                    \
        bad |= q != q;                                                                                                \
        r = RROUND(1.0f / q);                                                                                         \
      }                                                                                                               \
      l[i * n + j] = ROUND(s * r) + 0.0f;                                                                             \
    }                                                                                                                 \
  }                                                                                                                   \
  for (int64_t i = 0; i < n; ++i)                                                                                     \
    for (int64_t j = 0; j < n; ++j) out[i * rs + j * cs] = bad ? (uint16_t)(QNAN) : FROM32(l[i * n + j]);             \
}

AOTC__LA_HALF_CHOL(aotc_la_h, aotc_f16_to_f32, aotc_f32_to_f16, aotc_round_f16, aotc_round_f16, 0x7E00u)
AOTC__LA_HALF_CHOL(aotc_la_b, aotc_bf16_to_f32, aotc_f32_to_bf16, aotc_round_bf16, +, 0x7FC0u)

/* The cholesky HLO op on f8 and f4e2m1fn (T; stored one code a byte) as XLA:CPU computes
 * it for n <= 128: the unblocked expansion above with f16 arithmetic, every result narrowed
 * to T through f16 (aotc_round_T), except the pivot's sqrt and its reciprocal, which stay
 * f16 values (the reciprocal of the sqrt narrowed to T).  The NaN test reads the narrowed
 * sqrt, so a type without NaN (f4e2m1fn) never flags one. */
#define AOTC__LA_NARROW_CHOL(T)                                                                                       \
AOTC_RT_API void aotc_la_##T##_cholesky(int lower, int64_t n, const uint8_t* src, uint8_t* out, float* l) {           \
  int64_t rs = lower ? n : 1, cs = lower ? 1 : n;                                                                     \
  int bad = 0;                                                                                                        \
  for (int64_t i = 0; i < n * n; ++i) l[i] = 0.0f;                                                                    \
  for (int64_t j = 0; j < n; ++j) {                                                                                   \
    float r = 0.0f;                                                                                                   \
    for (int64_t i = j; i < n; ++i) {                                                                                 \
      float d = 0.0f;                                                                                                 \
      for (int64_t k = 0; k < j; ++k) d += l[i * n + k] * l[j * n + k];                                               \
      float s = aotc_round_##T(aotc_##T##_to_f32(src[i * rs + j * cs]) - aotc_round_##T(d));                         \
      if (i == j) {                                                                                                   \
        float q = aotc_round_##T(aotc_round_f16(sqrtf(s)));                                                           \
        bad |= q != q;                                                                                                \
        r = aotc_round_f16(1.0f / q);                                                                                 \
      }                                                                                                               \
      l[i * n + j] = aotc_round_##T(aotc_round_##T(s * r) + 0.0f);                                                    \
    }                                                                                                                 \
  }                                                                                                                   \
  for (int64_t i = 0; i < n * n; ++i) l[i] = bad ? aotc_bitcast_u32_f32(0x7FC00000u) : l[i];                          \
  for (int64_t i = 0; i < n; ++i)                                                                                     \
    for (int64_t j = 0; j < n; ++j) out[i * rs + j * cs] = aotc_store_##T(l[i * n + j]);                              \
}

AOTC__LA_NARROW_CHOL(f8e4m3fn)
AOTC__LA_NARROW_CHOL(f8e5m2)
AOTC__LA_NARROW_CHOL(f8e4m3fnuz)
AOTC__LA_NARROW_CHOL(f8e5m2fnuz)
AOTC__LA_NARROW_CHOL(f8e4m3b11fnuz)
AOTC__LA_NARROW_CHOL(f8e4m3)
AOTC__LA_NARROW_CHOL(f8e3m4)
AOTC__LA_NARROW_CHOL(f4e2m1fn)

/* The cholesky HLO op on f8e8m0fnu as XLA:CPU computes it (in f32): a 1x1 matrix is the
 * square root of its entry, read under DAZ (2^-127, an f32 subnormal, is 0, whose root is
 * NaN in this type); a larger one is all NaN, since the expansion's zeros, which this type
 * cannot hold, enter every dot.  `l` is unused (the same signature as the other types). */
AOTC_RT_API void aotc_la_f8e8m0fnu_cholesky(int lower, int64_t n, const uint8_t* src, uint8_t* out, float* l) {
  (void)lower;
  (void)l;
  if (n == 1) {
    out[0] = src[0] == 0u ? 0xFFu : aotc_store_f8e8m0fnu(sqrtf(aotc_f8e8m0fnu_to_f32(src[0])));
    return;
  }
  for (int64_t i = 0; i < n * n; ++i) out[i] = 0xFFu;
}

/* The triangular-solve HLO op on half, f8 and f4e2m1fn types as XLA:CPU's
 * TriangularSolveExpander writes it for k <= 128 (k the order of a; one diagonal block):
 *   r = 1 / diag (RROUND: f16 for f16 and the narrow types, unrounded f32 for bf16; 1 when
 *   `unit`), s = round(a r) scaled by column in a's triangle (the diagonal read as 1 when
 *   `unit`), then the inverse of s row by row (forward for lower, backward for upper) from
 *   -I with its first (last) pivot 1: row i = -round(s_i . inv) (an f32 dot), its rows
 *   scaled, inv_a = round(inv r_i); the solution is one f32 dot of inv_a (transposed when
 *   `trans`) with b, from the left or the right, rounded to the type.  ROUND rounds an f32
 *   value to the type (narrow types through f16, f8e8m0fnu straight from f32 with an f32
 *   reciprocal, as XLA:CPU computes that type in f32); negated values are rounded again, as
 *   XLA converts after its negate (fnuz types lose -0, f8e8m0fnu makes NaN: with k > 1 its
 *   inverse, and so its solution, is all NaN).  `w` is scratch of 2 k k + k floats. */
#define AOTC__LA_TRSOLVE(P, ST, TO32, ROUND, RROUND, STORE)                                                           \
AOTC_RT_API void P##_trsolve(int left, int lower, int trans, int unit, int64_t m, int64_t n, const ST* a,              \
                             const ST* b, ST* out, float* w) {                                                        \
  int64_t k = left ? m : n;                                                                                           \
  float *s = w, *inv = w + k * k, *r = w + 2 * k * k;                                                                 \
  for (int64_t j = 0; j < k; ++j) r[j] = unit ? 1.0f : RROUND(1.0f / (TO32(a[j * k + j]) + 0.0f));                   \
  for (int64_t i = 0; i < k; ++i)                                                                                     \
    for (int64_t j = 0; j < k; ++j) {                                                                                 \
      int in = lower ? i >= j : i <= j;                                                                               \
      float v = i == j && unit ? 1.0f : TO32(a[i * k + j]);                                                           \
      s[i * k + j] = in ? ROUND(v * r[j]) : 0.0f;                                                                     \
      inv[i * k + j] = ROUND(-ROUND(i == j ? 1.0f : 0.0f));                                                           \
    }                                                                                                                 \
  if (k > 0) inv[lower ? 0 : k * k - 1] = 1.0f;                                                                       \
  for (int64_t t = 1; t < k; ++t) {                                                                                   \
    int64_t i = lower ? t : k - 1 - t, lo = lower ? 0 : i, hi = lower ? i + 1 : k;                                    \
    for (int64_t c = 0; c < k; ++c) {                                                                                 \
      float d = 0.0f;                                                                                                 \
      for (int64_t q = lo; q < hi; ++q) d += s[i * k + q] * inv[q * k + c];                                           \
      inv[i * k + c] = ROUND(-ROUND(d));                                                                              \
    }                                                                                                                 \
  }                                                                                                                   \
  for (int64_t i = 0; i < k; ++i)                                                                                     \
    for (int64_t c = 0; c < k; ++c) inv[i * k + c] = ROUND(inv[i * k + c] * r[i]);                                    \
  for (int64_t i = 0; i < m; ++i)                                                                                     \
    for (int64_t j = 0; j < n; ++j) {                                                                                 \
      float d = 0.0f;                                                                                                 \
      for (int64_t c = 0; c < k; ++c) {                                                                               \
        float x = left ? inv[trans ? c * k + i : i * k + c] : inv[trans ? j * k + c : c * k + j];                    \
        d += x * TO32(left ? b[c * n + j] : b[i * n + c]);                                                            \
      }                                                                                                               \
      out[i * n + j] = STORE(d);                                                                                      \
    }                                                                                                                 \
}

AOTC__LA_TRSOLVE(aotc_la_h, uint16_t, aotc_f16_to_f32, aotc_round_f16, aotc_round_f16, aotc_f32_to_f16)
AOTC__LA_TRSOLVE(aotc_la_b, uint16_t, aotc_bf16_to_f32, aotc_round_bf16, +, aotc_f32_to_bf16)
#define AOTC__LA_NARROW_TRSOLVE(T)                                                                                    \
  AOTC__LA_TRSOLVE(aotc_la_##T, uint8_t, aotc_##T##_to_f32, aotc_round_##T, aotc_round_f16, aotc_store_##T)
AOTC__LA_NARROW_TRSOLVE(f8e4m3fn)
AOTC__LA_NARROW_TRSOLVE(f8e5m2)
AOTC__LA_NARROW_TRSOLVE(f8e4m3fnuz)
AOTC__LA_NARROW_TRSOLVE(f8e5m2fnuz)
AOTC__LA_NARROW_TRSOLVE(f8e4m3b11fnuz)
AOTC__LA_NARROW_TRSOLVE(f8e4m3)
AOTC__LA_NARROW_TRSOLVE(f8e3m4)
AOTC__LA_NARROW_TRSOLVE(f4e2m1fn)
AOTC__LA_TRSOLVE(aotc_la_f8e8m0fnu, uint8_t, aotc_f8e8m0fnu_to_f32, aotc_round_f8e8m0fnu, +, aotc_store_f8e8m0fnu)
