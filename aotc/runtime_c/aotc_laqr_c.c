/* aotc_laqr_c.c -- the complex Schur form of a large Hessenberg matrix as LAPACK's zhseqr finds it for
 * n > 75: the small-bulge multishift QR with aggressive early deflation (Braman, Byers and Mathias) of
 * ?laqr0, with its window deflation ?laqr3 (?laqr2 and ?laqr4 inside it), its sweep ?laqr5 (in
 * aotc_laqr5_c.c), the reordering ?trexc (?lartg, ?rot) and the window's Hessenberg reduction ?gehd2 /
 * ?unm2r, following LAPACK 3.12 (as OpenBLAS 0.3.30 ships it) step by step, so the eigenvalues come out
 * in LAPACK's order wherever its BLAS kernels' rounding does not decide it (docs/custom_calls.md).
 * Written once in complex arithmetic (AOTC__LA_LAQR_CPLX, instantiated by aotc_geev.c inside its
 * AOTC__LA_GEEV after P##_lahqr, which serves as ?lahqr).  Row-major storage; the routines below take
 * Fortran's 1-based indices (AOTC__LQ_H(i, j) is H(i, j)), wantt and wantz always.
 *
 * Workspace: LAPACK carves ?laqr3's and ?laqr5's matrices out of H below its subdiagonal; here they come
 * from `work`.  The callers (?gees, ?geev) pass LAPACK the optimal lwork, so no bound by lwork applies:
 * NWMAX = (n-1)/3 and NSMAX = (n-3)/6 for ?laqr0 and, as LAPACK hands its lwork down unchanged, for the
 * ?laqr4 called on a window jw > 75 (NWMAX = (jw-1)/3); ?hseqr's 49 x 49 retry has lwork 49, which
 * bounds neither (16 < 24, 6 < 32).  A ?laqr0 on m rows needs the largest of: the window's T and V and
 * three vectors, 2 jw^2 + 3 jw (jw <= (m-1)/3, plus the ?laqr4 inside when jw > 75); the shifts' copy and
 * its Z, 2 ns^2 (ns <= (m-3)/6); the sweep's U, bulges and a row, (2 ns)^2 + 3 ns/2 + 2 ns.  That is at
 * most m^2/4 + 2m, the bound AOTC_LA_LAQR_C_WORK uses; n < 49 needs the 49 x 49 copy and its ?laqr0.
 */
#ifndef AOTC_LAQR_C_C
#define AOTC_LAQR_C_C 1
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Complex elements of work P##_hseqr takes for an n x n matrix. */
#define AOTC_LA_LAQR_C_WORK(n) ((n) < 49 ? (int64_t)2977 : (int64_t)(n) * (n) / 4 + 2 * (int64_t)(n))

#ifndef AOTC_LAQR5_C_C
#include "aotc_laqr5_c.c" /* the sweep, ?laqr5 (AOTC__LA_LAQR5_CPLX) */
#endif
#define AOTC__LQ_NMIN 75 /* iparmq's NMIN: ?lahqr up to 75 rows */
#define AOTC__LQ_H(i, j) h[((i) - 1) * ldh + (j) - 1]
#define AOTC__LQ_Z(i, j) z[((i) - 1) * ldz + (j) - 1]
#define AOTC__LQ_T(i, j) t[((i) - 1) * ldt + (j) - 1]
#define AOTC__LQ_U(i, j) u[((i) - 1) * ldu + (j) - 1]
#define AOTC__LQ_V(i, j) v[((i) - 1) * ldv + (j) - 1]

#define AOTC__LA_LAQR_CPLX(P, T, R)                                                                                   \
/* x / s for a real s, part by part (Fortran's complex over real). */                                                 \
AOTC_INLINE T P##_lq_rdiv(T x, R s) { return P##_mk(P##_re(x) / s, P##_im(x) / s); }                                  \
/* |x| as Fortran's ABS of a complex (cabs: hypot). */                                                                \
AOTC_INLINE R P##_lq_cabs(T x) { return (R)hypot((double)P##_re(x), (double)P##_im(x)); }                             \
AOTC_INLINE T P##_lq_neg(T x) { return P##_mk(-P##_re(x), -P##_im(x)); }                                              \
/* sum over k < m of a[k sa] b[k sb] (a conjugated with `conja`), in k order: one entry of ?gemm's C := A B. */       \
AOTC_INLINE T P##_lq_dot(int64_t m, const T* a, int64_t sa, const T* b, int64_t sb, int conja) {                      \
  T s = P##_mk((R)0, (R)0);                                                                                           \
  for (int64_t k = 0; k < m; ++k) s = P##_add(s, P##_mul(conja ? P##_conj(a[k * sa]) : a[k * sa], b[k * sb]));        \
  return s;                                                                                                           \
}                                                                                                                     \
/* ?laqr's workspace rows: x[r*sr + c*sc] := (sum_k A(r, k) B(k, c)) for r < m, c < nc, one row at a time through     \
   tmp (nc entries); x is A itself (x := x U, `left` 0: B = u with strides su0, su1) or B itself (x := U^H x). */     \
AOTC_INLINE void P##_lq_mulu(int left, int64_t m, int64_t nc, T* x, int64_t sr, int64_t sc, const T* u, int64_t su0,  \
                             int64_t su1, T* tmp) {                                                                   \
  for (int64_t r = 0; r < m; ++r) {                                                                                   \
    for (int64_t c = 0; c < nc; ++c)                                                                                  \
      tmp[c] = left ? P##_lq_dot(nc, u + c * su1, su0, x + r * sr, sc, 1)                                             \
                    : P##_lq_dot(nc, x + r * sr, sc, u + c * su1, su0, 0);                                            \
    for (int64_t c = 0; c < nc; ++c) x[r * sr + c * sc] = tmp[c];                                                     \
  }                                                                                                                   \
}                                                                                                                     \
/* ?larfg on alpha, x[0..m-1) (contiguous): returns tau. */                                                           \
AOTC_INLINE T P##_lq_larfg(int64_t m, T* alpha, T* x) {                                                               \
  T v[3];                                                                                                             \
  v[0] = *alpha;                                                                                                      \
  for (int64_t i = 1; i < m; ++i) v[i] = x[i - 1];                                                                    \
  T tau = P##_hq_larfg(m, v, 1);                                                                                      \
  *alpha = v[0];                                                                                                      \
  for (int64_t i = 1; i < m; ++i) x[i - 1] = v[i];                                                                    \
  return tau;                                                                                                         \
}                                                                                                                     \
/* ?lartg (LAPACK 3.10's): c, s, r with [c s; -conj(s) c] [f; g] = [r; 0], c real. */                                 \
AOTC_INLINE void P##_lq_lartg(T f, T g, R* c, T* s, T* r) {                                                           \
  const R safmin = P##_sfmin(), safmax = (R)1 / safmin, rtmin = P##_sqrt(safmin);                                     \
  const T czero = P##_mk((R)0, (R)0);                                                                                 \
  R fr = P##_fabs(P##_re(f)), fi = P##_fabs(P##_im(f)), gr = P##_fabs(P##_re(g)), gi = P##_fabs(P##_im(g));           \
  R f1 = fr > fi ? fr : fi, g1 = gr > gi ? gr : gi;                                                                   \
  if (P##_iszero(g)) { *c = (R)1; *s = czero; *r = f; return; }                                                       \
  if (P##_iszero(f)) {                                                                                                \
    *c = (R)0;                                                                                                        \
    const R rtmax = P##_sqrt(safmax / (R)2);                                                                          \
    if (P##_re(g) == (R)0 || P##_im(g) == (R)0) {                                                                     \
      R d = P##_re(g) == (R)0 ? gi : gr;                                                                              \
      *r = P##_mk(d, (R)0);                                                                                           \
      *s = P##_lq_rdiv(P##_conj(g), d);                                                                               \
    } else if (g1 > rtmin && g1 < rtmax) {                                                                            \
      R d = P##_sqrt(P##_abs2(g));                                                                                    \
      *s = P##_lq_rdiv(P##_conj(g), d);                                                                               \
      *r = P##_mk(d, (R)0);                                                                                           \
    } else {                                                                                                          \
      R u = g1 > safmin ? g1 : safmin;                                                                                \
      u = u < safmax ? u : safmax;                                                                                    \
      T gs = P##_lq_rdiv(g, u);                                                                                       \
      R d = P##_sqrt(P##_abs2(gs));                                                                                   \
      *s = P##_lq_rdiv(P##_conj(gs), d);                                                                              \
      *r = P##_mk(d * u, (R)0);                                                                                       \
    }                                                                                                                 \
    return;                                                                                                           \
  }                                                                                                                   \
  R rtmax = P##_sqrt(safmax / (R)4), u = (R)1, w = (R)1, f2, g2, h2;                                                  \
  T fs = f, gs = g;                                                                                                   \
  if (!(f1 > rtmin && f1 < rtmax && g1 > rtmin && g1 < rtmax)) { /* scaled */                                         \
    u = f1 > g1 ? f1 : g1;                                                                                            \
    u = u > safmin ? u : safmin;                                                                                      \
    u = u < safmax ? u : safmax;                                                                                      \
    gs = P##_lq_rdiv(g, u);                                                                                           \
    if (f1 / u < rtmin) {                                                                                             \
      R v = f1 > safmin ? f1 : safmin;                                                                                \
      v = v < safmax ? v : safmax;                                                                                    \
      w = v / u;                                                                                                      \
      fs = P##_lq_rdiv(f, v);                                                                                         \
    } else {                                                                                                          \
      fs = P##_lq_rdiv(f, u);                                                                                         \
    }                                                                                                                 \
  }                                                                                                                   \
  f2 = P##_abs2(fs);                                                                                                  \
  g2 = P##_abs2(gs);                                                                                                  \
  h2 = w == (R)1 ? f2 + g2 : f2 * (w * w) + g2;                                                                       \
  if (f2 >= h2 * safmin) {                                                                                            \
    *c = P##_sqrt(f2 / h2);                                                                                           \
    *r = P##_lq_rdiv(fs, *c);                                                                                         \
    rtmax *= (R)2;                                                                                                    \
    if (f2 > rtmin && h2 < rtmax)                                                                                     \
      *s = P##_mul(P##_lq_rdiv(fs, P##_sqrt(f2)), P##_lq_rdiv(P##_conj(gs), P##_sqrt(h2)));                           \
    else                                                                                                              \
      *s = P##_mul(P##_conj(gs), P##_lq_rdiv(*r, h2));                                                                \
  } else {                                                                                                            \
    R d = P##_sqrt(f2 * h2);                                                                                          \
    *c = f2 / d;                                                                                                      \
    *r = *c >= safmin ? P##_lq_rdiv(fs, *c) : P##_rmul(fs, h2 / d);                                                   \
    *s = P##_mul(P##_lq_rdiv(fs, P##_sqrt(f2)), P##_lq_rdiv(P##_conj(gs), P##_sqrt(h2)));                             \
  }                                                                                                                   \
  *c *= w;                                                                                                            \
  *r = P##_rmul(*r, u);                                                                                               \
}                                                                                                                     \
/* ?rot: (x, y) := (c x + s y, c y - conj(s) x) over m entries. */                                                    \
AOTC_INLINE void P##_lq_rot(int64_t m, T* x, int64_t sx, T* y, int64_t sy, R c, T s) {                                \
  for (int64_t i = 0; i < m; ++i) {                                                                                   \
    T a = x[i * sx], b = y[i * sy];                                                                                   \
    x[i * sx] = P##_add(P##_rmul(a, c), P##_mul(s, b));                                                               \
    y[i * sy] = P##_sub(P##_rmul(b, c), P##_mul(P##_conj(s), a));                                                     \
  }                                                                                                                   \
}                                                                                                                     \
/* ?trexc: the upper triangular n x n t's diagonal entry ifst moved to ilst (0-based) by rotations of adjacent        \
   entries, q := q times them. */                                                                                     \
AOTC_INLINE void P##_lq_trexc(int64_t n, T* t, int64_t ldt, T* q, int64_t ldq, int64_t ifst, int64_t ilst) {          \
  if (n <= 1 || ifst == ilst) return;                                                                                 \
  const int64_t step = ifst < ilst ? 1 : -1;                                                                          \
  for (int64_t k = ifst < ilst ? ifst : ifst - 1; ifst < ilst ? k < ilst : k >= ilst; k += step) {                    \
    T t11 = t[k * ldt + k], t22 = t[(k + 1) * ldt + k + 1], sn, rr;                                                   \
    R cs;                                                                                                             \
    P##_lq_lartg(t[k * ldt + k + 1], P##_sub(t22, t11), &cs, &sn, &rr);                                               \
    if (k + 2 < n) P##_lq_rot(n - k - 2, t + k * ldt + k + 2, 1, t + (k + 1) * ldt + k + 2, 1, cs, sn);               \
    P##_lq_rot(k, t + k, ldt, t + k + 1, ldt, cs, P##_conj(sn));                                                      \
    t[k * ldt + k] = t22;                                                                                             \
    t[(k + 1) * ldt + k + 1] = t11;                                                                                   \
    P##_lq_rot(n, q + k, ldq, q + k + 1, ldq, cs, P##_conj(sn));                                                      \
  }                                                                                                                   \
}                                                                                                                     \
/* ?larf: the m x nc c (leading dimension ldc) := H c (`left`) or c H, H = I - tau v v^H, as ?gemv then ?gerc.        \
   wk: m or nc scratch. */                                                                                            \
AOTC_INLINE void P##_lq_larf(int left, int64_t m, int64_t nc, const T* v, T tau, T* c, int64_t ldc, T* wk) {          \
  if (P##_iszero(tau)) return;                                                                                        \
  const T ntau = P##_lq_neg(tau);                                                                                     \
  if (left) {                                                                                                         \
    for (int64_t j = 0; j < nc; ++j) wk[j] = P##_lq_dot(m, c + j, ldc, v, 1, 1);                                      \
    for (int64_t j = 0; j < nc; ++j) {                                                                                \
      T tmp = P##_mul(ntau, P##_conj(wk[j]));                                                                         \
      for (int64_t i = 0; i < m; ++i) c[i * ldc + j] = P##_add(c[i * ldc + j], P##_mul(v[i], tmp));                   \
    }                                                                                                                 \
  } else {                                                                                                            \
    for (int64_t i = 0; i < m; ++i) wk[i] = P##_mk((R)0, (R)0);                                                       \
    for (int64_t j = 0; j < nc; ++j)                                                                                  \
      for (int64_t i = 0; i < m; ++i) wk[i] = P##_add(wk[i], P##_mul(v[j], c[i * ldc + j]));                          \
    for (int64_t j = 0; j < nc; ++j) {                                                                                \
      T tmp = P##_mul(ntau, P##_conj(v[j]));                                                                          \
      for (int64_t i = 0; i < m; ++i) c[i * ldc + j] = P##_add(c[i * ldc + j], P##_mul(wk[i], tmp));                  \
    }                                                                                                                 \
  }                                                                                                                   \
}                                                                                                                     \
/* ?gehd2 with ilo = 1 on the n x n t: rows and columns 0..ihi1) reduced to Hessenberg form, the reflectors below     \
   the subdiagonal, their taus in tau; with `apply`, ?unm2r's q := q Q instead (t and tau as left by ?gehd2; q's      \
   columns 1..ihi1), m rows.  vec, wk: n scratch each. */                                                             \
AOTC_INLINE void P##_lq_gehd2(int apply, int64_t n, int64_t ihi1, T* t, int64_t ldt, T* tau, T* q, int64_t ldq,       \
                              int64_t m, T* vec, T* wk) {                                                             \
  for (int64_t i = 0; i + 1 < ihi1; ++i) {                                                                            \
    const int64_t len = ihi1 - i - 1;                                                                                 \
    if (!apply) tau[i] = P##_hq_larfg(len, t + (i + 1) * ldt + i, ldt);                                               \
    vec[0] = P##_mk((R)1, (R)0);                                                                                      \
    for (int64_t r = 1; r < len; ++r) vec[r] = t[(i + 1 + r) * ldt + i];                                              \
    if (apply) {                                                                                                      \
      P##_lq_larf(0, m, len, vec, tau[i], q + i + 1, ldq, wk);                                                        \
      continue;                                                                                                       \
    }                                                                                                                 \
    P##_lq_larf(0, ihi1, len, vec, tau[i], t + i + 1, ldt, wk);                                                       \
    P##_lq_larf(1, len, n - i - 1, vec, P##_conj(tau[i]), t + (i + 1) * ldt + i + 1, ldt, wk);                        \
  }                                                                                                                   \
}                                                                                                                     \
/* ?lahqr(wantt, wantz) on the whole n x n h (z n x n): LAPACK's first pass making the subdiagonal real (row i by     \
   conj(phase) from column i, column i by phase down to row i + 1, as zlahqr scales), then P##_lahqr. */              \
AOTC_INLINE int64_t P##_lq_lahqr(int64_t n, T* h, T* z, T* w) {                                                       \
  for (int64_t i = 1; i < n; ++i) {                                                                                   \
    T sub = h[i * n + i - 1];                                                                                         \
    if (P##_im(sub) == (R)0) continue;                                                                                \
    T sc = P##_lq_rdiv(sub, P##_abs1(sub));                                                                           \
    sc = P##_lq_rdiv(P##_conj(sc), P##_lq_cabs(sc));                                                                  \
    const T csc = P##_conj(sc);                                                                                       \
    h[i * n + i - 1] = P##_mk(P##_lq_cabs(sub), (R)0);                                                                \
    for (int64_t c = i; c < n; ++c) h[i * n + c] = P##_mul(sc, h[i * n + c]);                                         \
    for (int64_t r = 0; r <= i + 1 && r < n; ++r) h[r * n + i] = P##_mul(csc, h[r * n + i]);                          \
    for (int64_t r = 0; r < n; ++r) z[r * n + i] = P##_mul(csc, z[r * n + i]);                                        \
  }                                                                                                                   \
  return P##_lahqr(n, h, z, w);                                                                                       \
}                                                                                                                     \
/* ?laqr1: a multiple of (H - s1)(H - s2) e1 for the leading 2 x 2 or 3 x 3 of h (1-based H(i, j)). */                \
AOTC_INLINE void P##_lq_laqr1(int nn, const T* h, int64_t ldh, T s1, T s2, T* v) {                                    \
  const T zero = P##_mk((R)0, (R)0);                                                                                  \
  const T h11s = P##_sub(AOTC__LQ_H(1, 1), s2);                                                                       \
  const T tr = P##_sub(P##_sub(P##_add(AOTC__LQ_H(1, 1), AOTC__LQ_H(2, 2)), s1), s2);                                 \
  R s = P##_abs1(h11s) + P##_abs1(AOTC__LQ_H(2, 1));                                                                  \
  if (nn == 2) {                                                                                                      \
    if (s == (R)0) { v[0] = v[1] = zero; return; }                                                                    \
    T h21s = P##_lq_rdiv(AOTC__LQ_H(2, 1), s);                                                                        \
    v[0] = P##_add(P##_mul(h21s, AOTC__LQ_H(1, 2)), P##_mul(P##_sub(AOTC__LQ_H(1, 1), s1), P##_lq_rdiv(h11s, s)));    \
    v[1] = P##_mul(h21s, tr);                                                                                         \
    return;                                                                                                           \
  }                                                                                                                   \
  s += P##_abs1(AOTC__LQ_H(3, 1));                                                                                    \
  if (s == (R)0) { v[0] = v[1] = v[2] = zero; return; }                                                               \
  T h21s = P##_lq_rdiv(AOTC__LQ_H(2, 1), s), h31s = P##_lq_rdiv(AOTC__LQ_H(3, 1), s);                                 \
  v[0] = P##_add(P##_mul(P##_sub(AOTC__LQ_H(1, 1), s1), P##_lq_rdiv(h11s, s)), P##_mul(AOTC__LQ_H(1, 2), h21s));      \
  v[0] = P##_add(v[0], P##_mul(AOTC__LQ_H(1, 3), h31s));                                                              \
  v[1] = P##_add(P##_mul(h21s, tr), P##_mul(AOTC__LQ_H(2, 3), h31s));                                                 \
  v[2] = P##_add(P##_mul(h31s, P##_sub(P##_sub(P##_add(AOTC__LQ_H(1, 1), AOTC__LQ_H(3, 3)), s1), s2)),                \
                 P##_mul(h21s, AOTC__LQ_H(3, 2)));                                                                    \
}                                                                                                                     \
AOTC_INLINE int64_t P##_lq_laqr0(int rec, int64_t n, int64_t ilo, int64_t ihi, T* h, int64_t ldh, T* w, int64_t iloz, \
                                 int64_t ihiz, T* z, int64_t ldz, T* work);                                           \
/* ?laqr3 (`rec`: a window wider than NMIN by ?laqr4) or ?laqr2 (`rec` 0: always ?lahqr): aggressive early            \
   deflation on the window of the last nw rows of the active block ktop..kbot (1-based) of h.  *ns: the               \
   undeflated eigenvalues left as shifts at the window's top (in sh), *nd: those deflated.  work: see the header. */  \
AOTC_INLINE void P##_lq_aed(int rec, int64_t n, int64_t ktop, int64_t kbot, int64_t nw, T* h, int64_t ldh,            \
                            int64_t iloz, int64_t ihiz, T* z, int64_t ldz, int64_t* ns_out, int64_t* nd_out, T* sh,   \
                            T* work) {                                                                                \
  const T zero = P##_mk((R)0, (R)0);                                                                                  \
  const R ulp = P##_eps(), smlnum = P##_sfmin() * ((R)n / ulp);                                                       \
  const int64_t jw = nw < kbot - ktop + 1 ? nw : kbot - ktop + 1, kwtop = kbot - jw + 1;                              \
  *ns_out = *nd_out = 0;                                                                                              \
  if (ktop > kbot || nw < 1) return;                                                                                  \
  T s = kwtop == ktop ? zero : AOTC__LQ_H(kwtop, kwtop - 1);                                                          \
  if (kbot == kwtop) {                                                                                                \
    sh[kwtop - 1] = AOTC__LQ_H(kwtop, kwtop);                                                                         \
    *ns_out = 1;                                                                                                      \
    R tst = ulp * P##_abs1(AOTC__LQ_H(kwtop, kwtop));                                                                 \
    if (P##_abs1(s) <= (smlnum > tst ? smlnum : tst)) {                                                               \
      *ns_out = 0;                                                                                                    \
      *nd_out = 1;                                                                                                    \
      if (kwtop > ktop) AOTC__LQ_H(kwtop, kwtop - 1) = zero;                                                          \
    }                                                                                                                 \
    return;                                                                                                           \
  }                                                                                                                   \
  T* t = work;                                                                                                        \
  T* v = t + jw * jw;                                                                                                 \
  T* vec = v + jw * jw;                                                                                               \
  T* wk = vec + jw;                                                                                                   \
  T* tau = wk + jw;                                                                                                   \
  const int64_t ldt = jw, ldv = jw;                                                                                   \
  for (int64_t i = 1; i <= jw; ++i)                                                                                   \
    for (int64_t j = 1; j <= jw; ++j) {                                                                               \
      AOTC__LQ_T(i, j) = j >= i - 1 ? AOTC__LQ_H(kwtop + i - 1, kwtop + j - 1) : zero;                                \
      AOTC__LQ_V(i, j) = P##_mk((R)(i == j), (R)0);                                                                   \
    }                                                                                                                 \
  int64_t infqr;                                                                                                      \
  if (rec && jw > AOTC__LQ_NMIN)                                                                                      \
    infqr = P##_lq_laqr0(0, jw, 1, jw, t, ldt, sh + kwtop - 1, 1, jw, v, ldv, tau + jw);                              \
  else                                                                                                                \
    infqr = P##_lq_lahqr(jw, t, v, sh + kwtop - 1);                                                                   \
  int64_t ns = jw, ilst = infqr + 1;                                                                                  \
  for (int64_t knt = infqr + 1; knt <= jw; ++knt) {                                                                   \
    R foo = P##_abs1(AOTC__LQ_T(ns, ns));                                                                             \
    if (foo == (R)0) foo = P##_abs1(s);                                                                               \
    const R tst = ulp * foo;                                                                                          \
    if (P##_abs1(s) * P##_abs1(AOTC__LQ_V(1, ns)) <= (smlnum > tst ? smlnum : tst)) {                                 \
      --ns;                                                                                                           \
    } else {                                                                                                          \
      P##_lq_trexc(jw, t, ldt, v, ldv, ns - 1, ilst - 1);                                                             \
      ++ilst;                                                                                                         \
    }                                                                                                                 \
  }                                                                                                                   \
  if (ns == 0) s = zero;                                                                                              \
  if (ns < jw) { /* sort the undeflated diagonal by decreasing |re| + |im|, as ?laqr3's selection */                  \
    for (int64_t i = infqr + 1; i <= ns; ++i) {                                                                       \
      int64_t ifst = i;                                                                                               \
      for (int64_t j = i + 1; j <= ns; ++j)                                                                           \
        if (P##_abs1(AOTC__LQ_T(j, j)) > P##_abs1(AOTC__LQ_T(ifst, ifst))) ifst = j;                                  \
      if (ifst != i) P##_lq_trexc(jw, t, ldt, v, ldv, ifst - 1, i - 1);                                               \
    }                                                                                                                 \
  }                                                                                                                   \
  for (int64_t i = infqr + 1; i <= jw; ++i) sh[kwtop + i - 2] = AOTC__LQ_T(i, i);                                     \
  if (!(ns < jw || P##_iszero(s))) {                                                                                  \
    *nd_out = jw - ns;                                                                                                \
    *ns_out = ns - infqr;                                                                                             \
    return;                                                                                                           \
  }                                                                                                                   \
  const int reduce = ns > 1 && !P##_iszero(s);                                                                        \
  if (reduce) { /* the spike's reflector, then the undeflated part back to Hessenberg form */                         \
    for (int64_t i = 0; i < ns; ++i) vec[i] = P##_conj(AOTC__LQ_V(1, i + 1));                                         \
    T tau1 = P##_hq_larfg(ns, vec, 1);                                                                                \
    vec[0] = P##_mk((R)1, (R)0);                                                                                      \
    for (int64_t i = 3; i <= jw; ++i)                                                                                 \
      for (int64_t j = 1; j <= i - 2; ++j) AOTC__LQ_T(i, j) = zero;                                                   \
    P##_lq_larf(1, ns, jw, vec, P##_conj(tau1), t, ldt, wk);                                                          \
    P##_lq_larf(0, ns, ns, vec, tau1, t, ldt, wk);                                                                    \
    P##_lq_larf(0, jw, ns, vec, tau1, v, ldv, wk);                                                                    \
    P##_lq_gehd2(0, jw, ns, t, ldt, tau, NULL, 0, 0, vec, wk);                                                        \
  }                                                                                                                   \
  if (kwtop > 1) AOTC__LQ_H(kwtop, kwtop - 1) = P##_mul(s, P##_conj(AOTC__LQ_V(1, 1)));                               \
  for (int64_t i = 1; i <= jw; ++i)                                                                                   \
    for (int64_t j = i > 1 ? i - 1 : 1; j <= jw; ++j) AOTC__LQ_H(kwtop + i - 1, kwtop + j - 1) = AOTC__LQ_T(i, j);    \
  if (reduce) P##_lq_gehd2(1, jw, ns, t, ldt, tau, v, ldv, jw, vec, wk);                                              \
  /* the rest of h and z times the window's unitary v */                                                              \
  P##_lq_mulu(0, kwtop - 1, jw, &AOTC__LQ_H(1, kwtop), ldh, 1, v, ldv, 1, wk);                                        \
  P##_lq_mulu(1, n - kbot, jw, kbot < n ? &AOTC__LQ_H(kwtop, kbot + 1) : h, 1, ldh, v, ldv, 1, wk);                   \
  P##_lq_mulu(0, ihiz - iloz + 1, jw, &AOTC__LQ_Z(iloz, kwtop), ldz, 1, v, ldv, 1, wk);                               \
  *nd_out = jw - ns;                                                                                                  \
  *ns_out = ns - infqr;                                                                                               \
}                                                                                                                     \
AOTC__LA_LAQR5_CPLX(P, T, R)                                                                                          \
/* iparmq's NS (ispec 15) for the nh rows of the active range. */                                                     \
AOTC_INLINE int64_t P##_lq_iparmq_ns(int64_t nh) {                                                                    \
  int64_t ns = 2;                                                                                                     \
  if (nh >= 30) ns = 4;                                                                                               \
  if (nh >= 60) ns = 10;                                                                                              \
  if (nh >= 150) {                                                                                                    \
    const int64_t lg = (int64_t)floor(log((double)nh) / log(2.0) + 0.5);                                              \
    ns = nh / lg > 10 ? nh / lg : 10;                                                                                 \
  }                                                                                                                   \
  if (nh >= 590) ns = 64;                                                                                             \
  if (nh >= 3000) ns = 128;                                                                                           \
  if (nh >= 6000) ns = 256;                                                                                           \
  ns -= ns % 2;                                                                                                       \
  return ns > 2 ? ns : 2;                                                                                             \
}                                                                                                                     \
/* ?laqr0 (`rec`) or ?laqr4 (`rec` 0: ?laqr2's deflation, shifts always from ?lahqr) with wantt and wantz: the        \
   Schur form of rows and columns ilo..ihi (1-based) of the Hessenberg n x n h (n > 15), z's rows iloz..ihiz          \
   times the transformations, w[ilo-1..ihi) its diagonal.  Returns 0, or kbot when the iterations ran out. */         \
AOTC_INLINE int64_t P##_lq_laqr0(int rec, int64_t n, int64_t ilo, int64_t ihi, T* h, int64_t ldh, T* w, int64_t iloz, \
                                 int64_t ihiz, T* z, int64_t ldz, T* work) {                                          \
  const int64_t nhall = ihi - ilo + 1, nsp = P##_lq_iparmq_ns(nhall);                                                 \
  int64_t nwr = nhall <= 500 ? nsp : 3 * nsp / 2;                                                                     \
  nwr = nwr > 2 ? nwr : 2;                                                                                            \
  nwr = nwr < nhall ? nwr : nhall;                                                                                    \
  nwr = nwr < (n - 1) / 3 ? nwr : (n - 1) / 3;                                                                        \
  int64_t nsr = nsp < (n - 3) / 6 ? nsp : (n - 3) / 6;                                                                \
  nsr = nsr < ihi - ilo ? nsr : ihi - ilo;                                                                            \
  nsr = nsr - nsr % 2 > 2 ? nsr - nsr % 2 : 2;                                                                        \
  const int kacc22 = nsp >= 14 ? 2 : 0;                                                                               \
  const int64_t nmin = AOTC__LQ_NMIN, nibble = 14, kexnw = 5, kexsh = 6, nwmax = (n - 1) / 3;                         \
  const int64_t nsmax = (n - 3) / 6 - ((n - 3) / 6) % 2;                                                              \
  const int64_t itmax = 30 * (nhall > 10 ? nhall : 10);                                                               \
  int64_t nw = nwmax, ndfl = 1, ndec = -1, kbot = ihi;                                                                \
  for (int64_t it = 1; it <= itmax; ++it) {                                                                           \
    if (kbot < ilo) return 0;                                                                                         \
    int64_t k = kbot;                                                                                                 \
    for (; k > ilo; --k)                                                                                              \
      if (P##_iszero(AOTC__LQ_H(k, k - 1))) break;                                                                    \
    const int64_t ktop = k, nh = kbot - ktop + 1, nwupbd = nh < nwmax ? nh : nwmax;                                   \
    if (ndfl < kexnw)                                                                                                 \
      nw = nwupbd < nwr ? nwupbd : nwr;                                                                               \
    else                                                                                                              \
      nw = nwupbd < 2 * nw ? nwupbd : 2 * nw;                                                                         \
    if (nw < nwmax) {                                                                                                 \
      if (nw >= nh - 1) {                                                                                             \
        nw = nh;                                                                                                      \
      } else {                                                                                                        \
        const int64_t kwtop = kbot - nw + 1;                                                                          \
        if (P##_abs1(AOTC__LQ_H(kwtop, kwtop - 1)) > P##_abs1(AOTC__LQ_H(kwtop - 1, kwtop - 2))) ++nw;                \
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
    P##_lq_aed(rec, n, ktop, kbot, nw, h, ldh, iloz, ihiz, z, ldz, &ls, &ld, w, work);                                \
    kbot -= ld;                                                                                                       \
    int64_t ks = kbot - ls + 1;                                                                                       \
    const int64_t lim = nmin < nwmax ? nmin : nwmax;                                                                  \
    if (ld == 0 || (100 * ld <= nw * nibble && kbot - ktop + 1 > lim)) {                                              \
      int64_t ns = nsmax < nsr ? nsmax : nsr;                                                                         \
      ns = ns < (kbot - ktop > 2 ? kbot - ktop : 2) ? ns : (kbot - ktop > 2 ? kbot - ktop : 2);                       \
      ns -= ns % 2;                                                                                                   \
      if (ndfl % kexsh == 0) { /* exceptional shifts */                                                               \
        ks = kbot - ns + 1;                                                                                           \
        for (int64_t i = kbot; i >= ks + 1; i -= 2) {                                                                 \
          const T hi = AOTC__LQ_H(i, i);                                                                              \
          w[i - 1] = P##_mk(P##_re(hi) + (R)0.75 * P##_abs1(AOTC__LQ_H(i, i - 1)), P##_im(hi));                       \
          w[i - 2] = w[i - 1];                                                                                        \
        }                                                                                                             \
      } else {                                                                                                        \
        if (kbot - ks + 1 <= ns / 2) { /* too few from the deflation window: the bottom ns x ns's eigenvalues */      \
          ks = kbot - ns + 1;                                                                                         \
          T* hc = work;                                                                                               \
          T* zc = hc + ns * ns;                                                                                       \
          for (int64_t i = 0; i < ns; ++i)                                                                            \
            for (int64_t j = 0; j < ns; ++j) {                                                                        \
              hc[i * ns + j] = j >= i - 1 ? AOTC__LQ_H(ks + i, ks + j) : P##_mk((R)0, (R)0);                          \
              zc[i * ns + j] = P##_mk((R)(i == j), (R)0);                                                             \
            }                                                                                                         \
          int64_t inf;                                                                                                \
          if (rec && ns > nmin)                                                                                       \
            inf = P##_lq_laqr0(0, ns, 1, ns, hc, ns, w + ks - 1, 1, ns, zc, ns, zc + ns * ns);                        \
          else                                                                                                        \
            inf = P##_lq_lahqr(ns, hc, zc, w + ks - 1);                                                               \
          ks += inf;                                                                                                  \
          if (ks >= kbot) { /* the bottom 2 x 2's eigenvalues */                                                      \
            const R sc = P##_abs1(AOTC__LQ_H(kbot - 1, kbot - 1)) + P##_abs1(AOTC__LQ_H(kbot, kbot - 1)) +            \
                         P##_abs1(AOTC__LQ_H(kbot - 1, kbot)) + P##_abs1(AOTC__LQ_H(kbot, kbot));                     \
            const T aa = P##_lq_rdiv(AOTC__LQ_H(kbot - 1, kbot - 1), sc);                                             \
            const T cc = P##_lq_rdiv(AOTC__LQ_H(kbot, kbot - 1), sc);                                                 \
            const T bb = P##_lq_rdiv(AOTC__LQ_H(kbot - 1, kbot), sc), dd = P##_lq_rdiv(AOTC__LQ_H(kbot, kbot), sc);   \
            const T tr2 = P##_lq_rdiv(P##_add(aa, dd), (R)2);                                                         \
            const T det = P##_sub(P##_mul(P##_sub(aa, tr2), P##_sub(dd, tr2)), P##_mul(bb, cc));                      \
            const T rtdisc = P##_csqrt(P##_lq_neg(det));                                                              \
            w[kbot - 2] = P##_rmul(P##_add(tr2, rtdisc), sc);                                                         \
            w[kbot - 1] = P##_rmul(P##_sub(tr2, rtdisc), sc);                                                         \
            ks = kbot - 1;                                                                                            \
          }                                                                                                           \
        }                                                                                                             \
        if (kbot - ks + 1 > ns) { /* bubble sort by decreasing |re| + |im|, as ?laqr0 */                              \
          int sorted = 0;                                                                                             \
          for (int64_t kk = kbot; kk >= ks + 1 && !sorted; --kk) {                                                    \
            sorted = 1;                                                                                               \
            for (int64_t i = ks; i <= kk - 1; ++i)                                                                    \
              if (P##_abs1(w[i - 1]) < P##_abs1(w[i])) {                                                              \
                sorted = 0;                                                                                           \
                const T sw = w[i - 1];                                                                                \
                w[i - 1] = w[i];                                                                                      \
                w[i] = sw;                                                                                            \
              }                                                                                                       \
          }                                                                                                           \
        }                                                                                                             \
      }                                                                                                               \
      if (kbot - ks + 1 == 2) { /* two shifts: both the one nearer H(kbot, kbot) */                                   \
        const T hb = AOTC__LQ_H(kbot, kbot);                                                                          \
        if (P##_abs1(P##_sub(w[kbot - 1], hb)) < P##_abs1(P##_sub(w[kbot - 2], hb)))                                  \
          w[kbot - 2] = w[kbot - 1];                                                                                  \
        else                                                                                                          \
          w[kbot - 1] = w[kbot - 2];                                                                                  \
      }                                                                                                               \
      ns = ns < kbot - ks + 1 ? ns : kbot - ks + 1;                                                                   \
      ns -= ns % 2;                                                                                                   \
      ks = kbot - ns + 1;                                                                                             \
      P##_lq_sweep(kacc22, n, ktop, kbot, ns, w + ks - 1, h, ldh, iloz, ihiz, z, ldz, work);                          \
    }                                                                                                                 \
    ndfl = ld > 0 ? 1 : ndfl + 1;                                                                                     \
  }                                                                                                                   \
  return kbot;                                                                                                        \
}                                                                                                                     \
/* ?hseqr('S', 'V') on the Hessenberg n x n h (rows and columns outside ilo..ihi, 0-based, already triangular), z     \
   (n x n) := z times the transformations, w := diag(T).  n <= NMIN: P##_lahqr on the whole matrix; failing that      \
   ?hseqr's second try by ?laqr0 (on a 49 x 49 copy padded with zeros when n < 49).  n > NMIN: ?laqr0 on ilo..ihi.    \
   Returns 0, or the 1-based index of an eigenvalue that did not converge.  work: AOTC_LA_LAQR_C_WORK(n). */          \
AOTC_INLINE int32_t P##_hseqr(int64_t n, int64_t ilo, int64_t ihi, T* h, T* z, T* w, T* work) {                       \
  int64_t info;                                                                                                       \
  if (n <= 0) return 0;                                                                                               \
  if (n <= AOTC__LQ_NMIN) {                                                                                           \
    info = P##_lahqr(n, h, z, w);                                                                                     \
    if (info == 0) return 0;                                                                                          \
    if (n >= 49) {                                                                                                    \
      info = P##_lq_laqr0(1, n, 1, info, h, n, w, 1, n, z, n, work);                                                  \
    } else { /* ?hseqr's padded copy: 49 rows, the rest zero */                                                       \
      T* hl = work;                                                                                                   \
      for (int64_t i = 0; i < 49; ++i)                                                                                \
        for (int64_t j = 0; j < 49; ++j) hl[i * 49 + j] = i < n && j < n ? h[i * n + j] : P##_mk((R)0, (R)0);         \
      info = P##_lq_laqr0(1, 49, 1, info, hl, 49, w, 1, n, z, n, hl + 49 * 49);                                       \
      for (int64_t i = 0; i < n; ++i) memcpy(h + i * n, hl + i * 49, (size_t)n * sizeof(T));                          \
    }                                                                                                                 \
  } else {                                                                                                            \
    for (int64_t i = 0; i < n; ++i)                                                                                   \
      if (i < ilo || i >= ihi) w[i] = h[i * n + i]; /* w[ihi] too: all of it when ilo == ihi */                       \
    if (ilo == ihi) return 0;                                                                                         \
    info = P##_lq_laqr0(1, n, ilo + 1, ihi + 1, h, n, w, ilo + 1, ihi + 1, z, n, work);                               \
  }                                                                                                                   \
  for (int64_t i = 2; i < n; ++i)                                                                                     \
    for (int64_t j = 0; j + 1 < i; ++j) h[i * n + j] = P##_mk((R)0, (R)0);                                            \
  return (int32_t)info;                                                                                               \
}

#endif /* AOTC_LAQR_C_C */
