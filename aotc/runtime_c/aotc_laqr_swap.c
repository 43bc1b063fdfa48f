/* aotc_laqr_swap.c -- the reordering of a real Schur form that the aggressive early deflation of
 * aotc_laqr.c runs (LAPACK's ?trexc): a 1 x 1 or 2 x 2 diagonal block moved up or down by swaps of
 * adjacent blocks (?laexc), each solving the small Sylvester equation of the two blocks (?lasy2) and
 * applying the Householder reflections of order 3 (?larfx) or a plane rotation (?lartg, Anderson's
 * safe scaling) to T and to the window's vectors Q; a swap whose result would be too far from
 * Schur form is refused, as LAPACK refuses it.  Part of aotc_laqr.c (AOTC__LA_LAQR_REAL), whose
 * conventions it shares: row-major, 0-based, AOTC__LQ(x, ld, r, c).
 */
#ifndef AOTC_LAQR_SWAP_C
#define AOTC_LAQR_SWAP_C 1 /* the guard of aotc_laqr.c's #include of this file */
#include <math.h>
#include <stdint.h>

#define AOTC__LA_LAQR_SWAP_REAL(P, T)                                                                                 \
/* The plane rotation [c s; -s c] (f; g) = (r; 0) (?lartg, Anderson's safe scaling, LAPACK 3.10's divisions) */       \
AOTC_INLINE void P##_lq_lartg(T f, T g, T* c, T* s, T* r) {                                                           \
  const T safmin = P##_sfmin(), safmax = (T)1 / safmin;                                                               \
  const T rtmin = P##_sqrt(safmin), rtmax = P##_sqrt(safmax / (T)2);                                                  \
  const T f1 = P##_fabs(f), g1 = P##_fabs(g);                                                                         \
  if (g == (T)0) {                                                                                                    \
    *c = (T)1; *s = (T)0; *r = f;                                                                                     \
  } else if (f == (T)0) {                                                                                             \
    *c = (T)0; *s = P##_rs_sign((T)1, g); *r = g1;                                                                    \
  } else if (f1 > rtmin && f1 < rtmax && g1 > rtmin && g1 < rtmax) {                                                  \
    const T d = P##_sqrt(f * f + g * g);                                                                              \
    *c = f1 / d; *r = P##_rs_sign(d, f); *s = g / *r;                                                                 \
  } else {                                                                                                            \
    const T u = P##_rs_min(safmax, P##_rs_max(safmin, P##_rs_max(f1, g1)));                                           \
    const T fs = f / u, gs = g / u, d = P##_sqrt(fs * fs + gs * gs);                                                  \
    *c = P##_fabs(fs) / d; *r = P##_rs_sign(d, f); *s = gs / *r; *r *= u;                                             \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* (I - tau v v^T) applied to rows 0..2 of x, columns 0..m-1 (left), or to columns 0..2, rows 0..m-1                  \
   (right): ?larfx's order-3 case */                                                                                  \
AOTC_INLINE void P##_lq_larfx3(int right, int64_t m, const T* v, T tau, T* x, int64_t ld) {                           \
  const T t1 = tau * v[0], t2 = tau * v[1], t3 = tau * v[2];                                                          \
  for (int64_t j = 0; j < m; ++j) {                                                                                   \
    T* a = right ? &AOTC__LQ(x, ld, j, 0) : &AOTC__LQ(x, ld, 0, j);                                                   \
    const int64_t st = right ? 1 : ld;                                                                                \
    const T sum = v[0] * a[0] + v[1] * a[st] + v[2] * a[2 * st];                                                      \
    a[0] -= sum * t1;                                                                                                 \
    a[st] -= sum * t2;                                                                                                \
    a[2 * st] -= sum * t3;                                                                                            \
  }                                                                                                                   \
}                                                                                                                     \
                                                                                                                      \
/* X from TL X - X TR = scale B with TL n1 x n1, TR n2 x n2 (n1, n2 in {1, 2}; row-major with leading                 \
   dimension 4, as ?laexc's D), x row-major 2 x 2: ?lasy2 with ltranl = ltranr = false, isgn = -1 */                  \
AOTC_INLINE void P##_lq_lasy2(int n1, int n2, const T* tl, const T* tr, const T* b, T* scale, T* x) {                 \
  static const int locu12[4] = {2, 3, 0, 1}, locl21[4] = {1, 0, 3, 2}, locu22[4] = {3, 2, 1, 0};                      \
  static const int xswpiv[4] = {0, 0, 1, 1}, bswpiv[4] = {0, 1, 0, 1};                                                \
  const T eps = P##_eps(), smlnum = P##_sfmin() / eps;                                                                \
  if (n1 == 1 && n2 == 1) {                                                                                           \
    T tau1 = tl[0] - tr[0];                                                                                           \
    T bet = P##_fabs(tau1);                                                                                           \
    if (bet <= smlnum) { tau1 = smlnum; bet = smlnum; }                                                               \
    *scale = (T)1;                                                                                                    \
    const T gam = P##_fabs(b[0]);                                                                                     \
    if (smlnum * gam > bet) *scale = (T)1 / gam;                                                                      \
    x[0] = (b[0] * *scale) / tau1;                                                                                    \
    return;                                                                                                           \
  }                                                                                                                   \
  if (n1 + n2 == 3) { /* a 2 x 2 system, tmp column-major as ?lasy2's */                                              \
    T tmp[4], btmp[2], smin;                                                                                          \
    if (n1 == 1) {                                                                                                    \
      smin = P##_rs_max(eps * P##_rs_max(P##_rs_max(P##_rs_max(P##_fabs(tl[0]), P##_fabs(tr[0])),                     \
                                                     P##_rs_max(P##_fabs(tr[1]), P##_fabs(tr[4]))),                   \
                                          P##_fabs(tr[5])), smlnum);                                                  \
      tmp[0] = tl[0] - tr[0]; tmp[3] = tl[0] - tr[5];                                                                 \
      tmp[1] = -tr[1]; tmp[2] = -tr[4];                                                                               \
      btmp[0] = b[0]; btmp[1] = b[1];                                                                                 \
    } else {                                                                                                          \
      smin = P##_rs_max(eps * P##_rs_max(P##_rs_max(P##_rs_max(P##_fabs(tr[0]), P##_fabs(tl[0])),                     \
                                                     P##_rs_max(P##_fabs(tl[1]), P##_fabs(tl[4]))),                   \
                                          P##_fabs(tl[5])), smlnum);                                                  \
      tmp[0] = tl[0] - tr[0]; tmp[3] = tl[5] - tr[0];                                                                 \
      tmp[1] = tl[4]; tmp[2] = tl[1];                                                                                 \
      btmp[0] = b[0]; btmp[1] = b[4];                                                                                 \
    }                                                                                                                 \
    int ipiv = 0;                                                                                                     \
    for (int i = 1; i < 4; ++i) if (P##_fabs(tmp[i]) > P##_fabs(tmp[ipiv])) ipiv = i;                                 \
    T u11 = tmp[ipiv];                                                                                                \
    if (P##_fabs(u11) <= smin) u11 = smin;                                                                            \
    const T u12 = tmp[locu12[ipiv]], l21 = tmp[locl21[ipiv]] / u11;                                                   \
    T u22 = tmp[locu22[ipiv]] - u12 * l21;                                                                            \
    if (P##_fabs(u22) <= smin) u22 = smin;                                                                            \
    if (bswpiv[ipiv]) {                                                                                               \
      const T temp = btmp[1];                                                                                         \
      btmp[1] = btmp[0] - l21 * temp;                                                                                 \
      btmp[0] = temp;                                                                                                 \
    } else {                                                                                                          \
      btmp[1] = btmp[1] - l21 * btmp[0];                                                                              \
    }                                                                                                                 \
    *scale = (T)1;                                                                                                    \
    if (((T)2 * smlnum) * P##_fabs(btmp[1]) > P##_fabs(u22) || ((T)2 * smlnum) * P##_fabs(btmp[0]) > P##_fabs(u11)) { \
      *scale = (T)0.5 / P##_rs_max(P##_fabs(btmp[0]), P##_fabs(btmp[1]));                                             \
      btmp[0] *= *scale; btmp[1] *= *scale;                                                                           \
    }                                                                                                                 \
    T x2[2];                                                                                                          \
    x2[1] = btmp[1] / u22;                                                                                            \
    x2[0] = btmp[0] / u11 - (u12 / u11) * x2[1];                                                                      \
    if (xswpiv[ipiv]) { const T temp = x2[1]; x2[1] = x2[0]; x2[0] = temp; }                                          \
    x[0] = x2[0];                                                                                                     \
    if (n1 == 1) x[1] = x2[1]; else x[2] = x2[1];                                                                     \
    return;                                                                                                           \
  }                                                                                                                   \
  /* 2 x 2 by 2 x 2: the 4 x 4 system, Gaussian elimination with complete pivoting (t16[i][j] is ?lasy2's             \
     T16(i+1, j+1)) */                                                                                                \
  T smin = P##_rs_max(P##_rs_max(P##_fabs(tr[0]), P##_fabs(tr[1])), P##_rs_max(P##_fabs(tr[4]), P##_fabs(tr[5])));    \
  smin = P##_rs_max(P##_rs_max(smin, P##_rs_max(P##_fabs(tl[0]), P##_fabs(tl[1]))),                                   \
                    P##_rs_max(P##_fabs(tl[4]), P##_fabs(tl[5])));                                                    \
  smin = P##_rs_max(eps * smin, smlnum);                                                                              \
  T t16[4][4], btmp[4], tmp[4];                                                                                       \
  int jpiv[4] = {0, 1, 2, 3};                                                                                         \
  memset(t16, 0, sizeof t16);                                                                                         \
  t16[0][0] = tl[0] - tr[0]; t16[1][1] = tl[5] - tr[0];                                                               \
  t16[2][2] = tl[0] - tr[5]; t16[3][3] = tl[5] - tr[5];                                                               \
  t16[0][1] = tl[1]; t16[1][0] = tl[4]; t16[2][3] = tl[1]; t16[3][2] = tl[4];                                         \
  t16[0][2] = -tr[4]; t16[1][3] = -tr[4]; t16[2][0] = -tr[1]; t16[3][1] = -tr[1];                                     \
  btmp[0] = b[0]; btmp[1] = b[4]; btmp[2] = b[1]; btmp[3] = b[5];                                                     \
  for (int i = 0; i < 3; ++i) {                                                                                       \
    T xmax = (T)0;                                                                                                    \
    int ipsv = i, jpsv = i;                                                                                           \
    for (int ip = i; ip < 4; ++ip)                                                                                    \
      for (int jp = i; jp < 4; ++jp)                                                                                  \
        if (P##_fabs(t16[ip][jp]) >= xmax) { xmax = P##_fabs(t16[ip][jp]); ipsv = ip; jpsv = jp; }                    \
    if (ipsv != i) {                                                                                                  \
      for (int c = 0; c < 4; ++c) { const T temp = t16[ipsv][c]; t16[ipsv][c] = t16[i][c]; t16[i][c] = temp; }        \
      const T temp = btmp[i]; btmp[i] = btmp[ipsv]; btmp[ipsv] = temp;                                                \
    }                                                                                                                 \
    if (jpsv != i)                                                                                                    \
      for (int r = 0; r < 4; ++r) { const T temp = t16[r][jpsv]; t16[r][jpsv] = t16[r][i]; t16[r][i] = temp; }        \
    jpiv[i] = jpsv;                                                                                                   \
    if (P##_fabs(t16[i][i]) < smin) t16[i][i] = smin;                                                                 \
    for (int j = i + 1; j < 4; ++j) {                                                                                 \
      t16[j][i] /= t16[i][i];                                                                                         \
      btmp[j] -= t16[j][i] * btmp[i];                                                                                 \
      for (int k = i + 1; k < 4; ++k) t16[j][k] -= t16[j][i] * t16[i][k];                                             \
    }                                                                                                                 \
  }                                                                                                                   \
  if (P##_fabs(t16[3][3]) < smin) t16[3][3] = smin;                                                                   \
  *scale = (T)1;                                                                                                      \
  const T e8 = (T)8 * smlnum;                                                                                         \
  if (e8 * P##_fabs(btmp[0]) > P##_fabs(t16[0][0]) || e8 * P##_fabs(btmp[1]) > P##_fabs(t16[1][1]) ||                 \
      e8 * P##_fabs(btmp[2]) > P##_fabs(t16[2][2]) || e8 * P##_fabs(btmp[3]) > P##_fabs(t16[3][3])) {                 \
    *scale = ((T)1 / (T)8) / P##_rs_max(P##_rs_max(P##_fabs(btmp[0]), P##_fabs(btmp[1])),                             \
                                        P##_rs_max(P##_fabs(btmp[2]), P##_fabs(btmp[3])));                            \
    for (int i = 0; i < 4; ++i) btmp[i] *= *scale;                                                                    \
  }                                                                                                                   \
  for (int k = 3; k >= 0; --k) {                                                                                      \
    const T temp = (T)1 / t16[k][k];                                                                                  \
    tmp[k] = btmp[k] * temp;                                                                                          \
    for (int j = k + 1; j < 4; ++j) tmp[k] -= (temp * t16[k][j]) * tmp[j];                                            \
  }                                                                                                                   \
  for (int i = 2; i >= 0; --i)                                                                                        \
    if (jpiv[i] != i) { const T temp = tmp[i]; tmp[i] = tmp[jpiv[i]]; tmp[jpiv[i]] = temp; }                          \
  x[0] = tmp[0]; x[2] = tmp[1]; x[1] = tmp[2]; x[3] = tmp[3];                                                         \
}                                                                                                                     \
                                                                                                                      \
/* Swap the adjacent diagonal blocks of orders n1, n2 at row j1 of the upper quasi-triangular n x n t                 \
   (?laexc with wantq), q accumulating.  Returns 1 (nothing changed) when the swap is too inaccurate. */              \
AOTC_INLINE int P##_lq_laexc(int64_t n, T* t, int64_t ldt, T* q, int64_t ldq, int64_t j1, int n1, int n2) {           \
  if (n == 0 || n1 == 0 || n2 == 0 || j1 + 1 + n1 > n) return 0;                                                      \
  const int64_t j2 = j1 + 1, j3 = j1 + 2, j4 = j1 + 3;                                                                \
  T cs, sn, wr1, wi1, wr2, wi2;                                                                                       \
  if (n1 == 1 && n2 == 1) {                                                                                           \
    const T t11 = AOTC__LQ(t, ldt, j1, j1), t22 = AOTC__LQ(t, ldt, j2, j2);                                           \
    T temp;                                                                                                           \
    P##_lq_lartg(AOTC__LQ(t, ldt, j1, j2), t22 - t11, &cs, &sn, &temp);                                               \
    if (j3 <= n - 1) P##_rs_rot(n - j1 - 2, &AOTC__LQ(t, ldt, j1, j3), &AOTC__LQ(t, ldt, j2, j3), 1, cs, sn);         \
    P##_rs_rot(j1, &AOTC__LQ(t, ldt, 0, j1), &AOTC__LQ(t, ldt, 0, j2), ldt, cs, sn);                                  \
    AOTC__LQ(t, ldt, j1, j1) = t22;                                                                                   \
    AOTC__LQ(t, ldt, j2, j2) = t11;                                                                                   \
    P##_rs_rot(n, &AOTC__LQ(q, ldq, 0, j1), &AOTC__LQ(q, ldq, 0, j2), ldq, cs, sn);                                   \
    return 0;                                                                                                         \
  }                                                                                                                   \
  const int nd = n1 + n2;                                                                                             \
  T d[16], x[4] = {(T)0, (T)0, (T)0, (T)0}, scale, dnorm = (T)0;                                                      \
  for (int r = 0; r < nd; ++r)                                                                                        \
    for (int c = 0; c < nd; ++c) {                                                                                    \
      d[r * 4 + c] = AOTC__LQ(t, ldt, j1 + r, j1 + c);                                                                \
      const T a = P##_fabs(d[r * 4 + c]);                                                                             \
      if (dnorm < a || a != a) dnorm = a;                                                                             \
    }                                                                                                                 \
  const T eps = P##_eps(), smlnum = P##_sfmin() / eps;                                                                \
  const T thresh = P##_rs_max((T)10 * eps * dnorm, smlnum);                                                           \
  P##_lq_lasy2(n1, n2, d, d + n1 * 4 + n1, d + n1, &scale, x);                                                        \
  if (n1 == 1) { /* n2 == 2 */                                                                                        \
    T u[3] = {scale, x[0], x[1]};                                                                                     \
    const T tau = P##_rs_larfg(3, &u[2], u, 1);                                                                       \
    u[2] = (T)1;                                                                                                      \
    const T t11 = AOTC__LQ(t, ldt, j1, j1);                                                                           \
    P##_lq_larfx3(0, 3, u, tau, d, 4);                                                                                \
    P##_lq_larfx3(1, 3, u, tau, d, 4);                                                                                \
    if (P##_rs_max(P##_rs_max(P##_fabs(d[8]), P##_fabs(d[9])), P##_fabs(d[10] - t11)) > thresh) return 1;             \
    P##_lq_larfx3(0, n - j1, u, tau, &AOTC__LQ(t, ldt, j1, j1), ldt);                                                 \
    P##_lq_larfx3(1, j1 + 2, u, tau, &AOTC__LQ(t, ldt, 0, j1), ldt);                                                  \
    AOTC__LQ(t, ldt, j3, j1) = (T)0;                                                                                  \
    AOTC__LQ(t, ldt, j3, j2) = (T)0;                                                                                  \
    AOTC__LQ(t, ldt, j3, j3) = t11;                                                                                   \
    P##_lq_larfx3(1, n, u, tau, &AOTC__LQ(q, ldq, 0, j1), ldq);                                                       \
  } else if (n2 == 1) { /* n1 == 2 */                                                                                 \
    T u[3] = {-x[0], -x[2], scale};                                                                                   \
    const T tau = P##_rs_larfg(3, &u[0], &u[1], 1);                                                                   \
    u[0] = (T)1;                                                                                                      \
    const T t33 = AOTC__LQ(t, ldt, j3, j3);                                                                           \
    P##_lq_larfx3(0, 3, u, tau, d, 4);                                                                                \
    P##_lq_larfx3(1, 3, u, tau, d, 4);                                                                                \
    if (P##_rs_max(P##_rs_max(P##_fabs(d[4]), P##_fabs(d[8])), P##_fabs(d[0] - t33)) > thresh) return 1;              \
    P##_lq_larfx3(1, j1 + 3, u, tau, &AOTC__LQ(t, ldt, 0, j1), ldt);                                                  \
    P##_lq_larfx3(0, n - j1 - 1, u, tau, &AOTC__LQ(t, ldt, j1, j2), ldt);                                             \
    AOTC__LQ(t, ldt, j1, j1) = t33;                                                                                   \
    AOTC__LQ(t, ldt, j2, j1) = (T)0;                                                                                  \
    AOTC__LQ(t, ldt, j3, j1) = (T)0;                                                                                  \
    P##_lq_larfx3(1, n, u, tau, &AOTC__LQ(q, ldq, 0, j1), ldq);                                                       \
  } else { /* two 2 x 2 blocks */                                                                                     \
    T u1[3] = {-x[0], -x[2], scale};                                                                                  \
    const T tau1 = P##_rs_larfg(3, &u1[0], &u1[1], 1);                                                                \
    u1[0] = (T)1;                                                                                                     \
    const T temp = -tau1 * (x[1] + u1[1] * x[3]);                                                                     \
    T u2[3] = {-temp * u1[1] - x[3], -temp * u1[2], scale};                                                           \
    const T tau2 = P##_rs_larfg(3, &u2[0], &u2[1], 1);                                                                \
    u2[0] = (T)1;                                                                                                     \
    P##_lq_larfx3(0, 4, u1, tau1, d, 4);                                                                              \
    P##_lq_larfx3(1, 4, u1, tau1, d, 4);                                                                              \
    P##_lq_larfx3(0, 4, u2, tau2, d + 4, 4);                                                                          \
    P##_lq_larfx3(1, 4, u2, tau2, d + 1, 4);                                                                          \
    const T worst = P##_rs_max(P##_rs_max(P##_fabs(d[8]), P##_fabs(d[9])),                                            \
                               P##_rs_max(P##_fabs(d[12]), P##_fabs(d[13])));                                         \
    if (worst > thresh) return 1;                                                                                     \
    P##_lq_larfx3(0, n - j1, u1, tau1, &AOTC__LQ(t, ldt, j1, j1), ldt);                                               \
    P##_lq_larfx3(1, j1 + 4, u1, tau1, &AOTC__LQ(t, ldt, 0, j1), ldt);                                                \
    P##_lq_larfx3(0, n - j1, u2, tau2, &AOTC__LQ(t, ldt, j2, j1), ldt);                                               \
    P##_lq_larfx3(1, j1 + 4, u2, tau2, &AOTC__LQ(t, ldt, 0, j2), ldt);                                                \
    AOTC__LQ(t, ldt, j3, j1) = (T)0;                                                                                  \
    AOTC__LQ(t, ldt, j3, j2) = (T)0;                                                                                  \
    AOTC__LQ(t, ldt, j4, j1) = (T)0;                                                                                  \
    AOTC__LQ(t, ldt, j4, j2) = (T)0;                                                                                  \
    P##_lq_larfx3(1, n, u1, tau1, &AOTC__LQ(q, ldq, 0, j1), ldq);                                                     \
    P##_lq_larfx3(1, n, u2, tau2, &AOTC__LQ(q, ldq, 0, j2), ldq);                                                     \
  }                                                                                                                   \
  if (n2 == 2) { /* the blocks' standard forms */                                                                     \
    P##_rs_lanv2(&AOTC__LQ(t, ldt, j1, j1), &AOTC__LQ(t, ldt, j1, j2), &AOTC__LQ(t, ldt, j2, j1),                     \
                 &AOTC__LQ(t, ldt, j2, j2), &wr1, &wi1, &wr2, &wi2, &cs, &sn);                                        \
    P##_rs_rot(n - j1 - 2, &AOTC__LQ(t, ldt, j1, j1 + 2), &AOTC__LQ(t, ldt, j2, j1 + 2), 1, cs, sn);                  \
    P##_rs_rot(j1, &AOTC__LQ(t, ldt, 0, j1), &AOTC__LQ(t, ldt, 0, j2), ldt, cs, sn);                                  \
    P##_rs_rot(n, &AOTC__LQ(q, ldq, 0, j1), &AOTC__LQ(q, ldq, 0, j2), ldq, cs, sn);                                   \
  }                                                                                                                   \
  if (n1 == 2) {                                                                                                      \
    const int64_t k3 = j1 + n2, k4 = k3 + 1;                                                                          \
    P##_rs_lanv2(&AOTC__LQ(t, ldt, k3, k3), &AOTC__LQ(t, ldt, k3, k4), &AOTC__LQ(t, ldt, k4, k3),                     \
                 &AOTC__LQ(t, ldt, k4, k4), &wr1, &wi1, &wr2, &wi2, &cs, &sn);                                        \
    if (k3 + 2 <= n - 1)                                                                                              \
      P##_rs_rot(n - k3 - 2, &AOTC__LQ(t, ldt, k3, k3 + 2), &AOTC__LQ(t, ldt, k4, k3 + 2), 1, cs, sn);                \
    P##_rs_rot(k3, &AOTC__LQ(t, ldt, 0, k3), &AOTC__LQ(t, ldt, 0, k4), ldt, cs, sn);                                  \
    P##_rs_rot(n, &AOTC__LQ(q, ldq, 0, k3), &AOTC__LQ(q, ldq, 0, k4), ldq, cs, sn);                                   \
  }                                                                                                                   \
  return 0;                                                                                                           \
}                                                                                                                     \
                                                                                                                      \
/* Move the diagonal block at row *ifst of the quasi-triangular t to row *ilst by adjacent swaps (?trexc              \
   with compq 'V'); both are moved to their blocks' first rows, *ilst ends where the block went.  Returns 1           \
   when a swap failed (the block then stops at *ilst). */                                                             \
AOTC_INLINE int P##_lq_trexc(int64_t n, T* t, int64_t ldt, T* q, int64_t ldq, int64_t* ifst, int64_t* ilst) {         \
  if (n <= 1) return 0;                                                                                               \
  if (*ifst > 0 && AOTC__LQ(t, ldt, *ifst, *ifst - 1) != (T)0) --*ifst;                                               \
  int nbf = 1, nbl = 1;                                                                                               \
  if (*ifst < n - 1 && AOTC__LQ(t, ldt, *ifst + 1, *ifst) != (T)0) nbf = 2;                                           \
  if (*ilst > 0 && AOTC__LQ(t, ldt, *ilst, *ilst - 1) != (T)0) --*ilst;                                               \
  if (*ilst < n - 1 && AOTC__LQ(t, ldt, *ilst + 1, *ilst) != (T)0) nbl = 2;                                           \
  if (*ifst == *ilst) return 0;                                                                                       \
  int64_t here = *ifst;                                                                                               \
  if (*ifst < *ilst) { /* down */                                                                                     \
    if (nbf == 2 && nbl == 1) --*ilst;                                                                                \
    if (nbf == 1 && nbl == 2) ++*ilst;                                                                                \
    do {                                                                                                              \
      if (nbf == 1 || nbf == 2) {                                                                                     \
        int nbnext = 1;                                                                                               \
        if (here + nbf + 1 <= n - 1 && AOTC__LQ(t, ldt, here + nbf + 1, here + nbf) != (T)0) nbnext = 2;              \
        if (P##_lq_laexc(n, t, ldt, q, ldq, here, nbf, nbnext)) { *ilst = here; return 1; }                           \
        here += nbnext;                                                                                               \
        if (nbf == 2 && AOTC__LQ(t, ldt, here + 1, here) == (T)0) nbf = 3;                                            \
      } else { /* a 2 x 2 block split into two 1 x 1: move them separately */                                         \
        int nbnext = 1;                                                                                               \
        if (here + 3 <= n - 1 && AOTC__LQ(t, ldt, here + 3, here + 2) != (T)0) nbnext = 2;                            \
        if (P##_lq_laexc(n, t, ldt, q, ldq, here + 1, 1, nbnext)) { *ilst = here; return 1; }                         \
        if (nbnext == 1) {                                                                                            \
          P##_lq_laexc(n, t, ldt, q, ldq, here, 1, nbnext);                                                           \
          ++here;                                                                                                     \
        } else {                                                                                                      \
          if (AOTC__LQ(t, ldt, here + 2, here + 1) == (T)0) nbnext = 1;                                               \
          if (nbnext == 2) {                                                                                          \
            if (P##_lq_laexc(n, t, ldt, q, ldq, here, 1, nbnext)) { *ilst = here; return 1; }                         \
          } else {                                                                                                    \
            P##_lq_laexc(n, t, ldt, q, ldq, here, 1, 1);                                                              \
            P##_lq_laexc(n, t, ldt, q, ldq, here + 1, 1, 1);                                                          \
          }                                                                                                           \
          here += 2;                                                                                                  \
        }                                                                                                             \
      }                                                                                                               \
    } while (here < *ilst);                                                                                           \
  } else { /* up */                                                                                                   \
    do {                                                                                                              \
      int nbnext = 1;                                                                                                 \
      if (here >= 2 && AOTC__LQ(t, ldt, here - 1, here - 2) != (T)0) nbnext = 2;                                      \
      if (nbf == 1 || nbf == 2) {                                                                                     \
        if (P##_lq_laexc(n, t, ldt, q, ldq, here - nbnext, nbnext, nbf)) { *ilst = here; return 1; }                  \
        here -= nbnext;                                                                                               \
        if (nbf == 2 && AOTC__LQ(t, ldt, here + 1, here) == (T)0) nbf = 3;                                            \
      } else {                                                                                                        \
        if (P##_lq_laexc(n, t, ldt, q, ldq, here - nbnext, nbnext, 1)) { *ilst = here; return 1; }                    \
        if (nbnext == 1) {                                                                                            \
          P##_lq_laexc(n, t, ldt, q, ldq, here, nbnext, 1);                                                           \
          --here;                                                                                                     \
        } else {                                                                                                      \
          if (AOTC__LQ(t, ldt, here, here - 1) == (T)0) nbnext = 1;                                                   \
          if (nbnext == 2) {                                                                                          \
            if (P##_lq_laexc(n, t, ldt, q, ldq, here - 1, 2, 1)) { *ilst = here; return 1; }                          \
          } else {                                                                                                    \
            P##_lq_laexc(n, t, ldt, q, ldq, here, 1, 1);                                                              \
            P##_lq_laexc(n, t, ldt, q, ldq, here - 1, 1, 1);                                                          \
          }                                                                                                           \
          here -= 2;                                                                                                  \
        }                                                                                                             \
      }                                                                                                               \
    } while (here > *ilst);                                                                                           \
  }                                                                                                                   \
  *ilst = here;                                                                                                       \
  return 0;                                                                                                           \
}

#endif
