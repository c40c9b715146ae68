/* ---- Robust geometric predicates: grail_orient2d and grail_incircle ----
 *
 * Pasted into the C and the CUDA programs after their runtime header; GRAIL_GEOM is the target's
 * function qualifier, GRAIL_GEOM_SLOW its qualifier for the exact paths, kept out of line. Each
 * returns a double whose SIGN is exactly that of the determinant (the magnitude approximates it):
 * a mesh refined with them is never corrupted by round-off.
 *
 * Method: the determinant is evaluated in floating point, and its sign trusted when its magnitude
 * exceeds an error bound proportional to the magnitude of its terms (the bounds of
 * adaptive-precision predicates, doubled for margin); otherwise it is evaluated exactly, as an
 * *expansion* (a sum of doubles of increasing magnitude that do not overlap), built from exact
 * differences (two_diff), exact products (two_prod, with a fused multiply-add) and exact sums
 * (grow, zero-eliminating). The most significant term of an expansion has the sign of its value.
 * As for all such predicates, exactness assumes no intermediate value overflows or underflows
 * (coordinate differences between about 1e-140 and 1e140). */

#define GRAIL_GEOM_EPS 1.1102230246251565e-16 /* 2^-53 */
#define GRAIL_ORIENT_BOUND (2.0 * (3.0 + 16.0 * GRAIL_GEOM_EPS) * GRAIL_GEOM_EPS)
#define GRAIL_INCIRCLE_BOUND (2.0 * (10.0 + 96.0 * GRAIL_GEOM_EPS) * GRAIL_GEOM_EPS)

/* x + y == a + b exactly, x the rounded sum. */
GRAIL_GEOM void grail_two_sum(double a, double b, double *x, double *y) {
    double s = a + b;
    double bv = s - a;
    double av = s - bv;
    *x = s;
    *y = (a - av) + (b - bv);
}

/* x + y == a * b exactly, x the rounded product. */
GRAIL_GEOM void grail_two_prod(double a, double b, double *x, double *y) {
    double p = a * b;
    *x = p;
    *y = fma(a, b, -p);
}

/* Adds b to the expansion e[0..len) in place (e has room for one more term); returns the new
 * length. Zero terms are dropped; the result stays nonoverlapping and increasing. */
GRAIL_GEOM int grail_grow(double *e, int len, double b) {
    double q = b;
    int out = 0;
    for (int i = 0; i < len; i++) {
        double sum, err;
        grail_two_sum(q, e[i], &sum, &err);
        if (err != 0.0) e[out++] = err; /* out <= i: e[i + 1..] is still unread and intact */
        q = sum;
    }
    if (q != 0.0 || out == 0) e[out++] = q;
    return out;
}

/* The exact difference a - b as an expansion in d (2 terms at most); returns its length. */
GRAIL_GEOM int grail_diff(double a, double b, double *d) {
    double x, y;
    grail_two_sum(a, -b, &x, &y);
    int n = 0;
    if (y != 0.0) d[n++] = y;
    d[n++] = x;
    return n;
}

/* acc += e * f exactly (e and f expansions); acc has room for 2 * elen * flen more terms. */
GRAIL_GEOM int grail_add_product(double *acc, int len, const double *e, int elen, const double *f, int flen,
                                 double sign) {
    for (int j = 0; j < flen; j++) {
        for (int i = 0; i < elen; i++) {
            double p, err;
            grail_two_prod(e[i], sign * f[j], &p, &err);
            if (err != 0.0) len = grail_grow(acc, len, err);
            len = grail_grow(acc, len, p);
        }
    }
    return len;
}

/* The sign of orient2d's determinant, exactly (the slow path, out of line). */
GRAIL_GEOM_SLOW double grail_orient2d_exact(double ax, double ay, double bx, double by, double cx, double cy) {
    double acx[2], bcy[2], acy[2], bcx[2], sum[16];
    int nacx = grail_diff(ax, cx, acx), nbcy = grail_diff(by, cy, bcy);
    int nacy = grail_diff(ay, cy, acy), nbcx = grail_diff(bx, cx, bcx);
    int n = grail_add_product(sum, 0, acx, nacx, bcy, nbcy, 1.0);
    n = grail_add_product(sum, n, acy, nacy, bcx, nbcx, -1.0);
    return sum[n - 1];
}

/* Positive when a, b, c turn counterclockwise, negative when clockwise, zero when collinear. */
GRAIL_GEOM double grail_orient2d(double ax, double ay, double bx, double by, double cx, double cy) {
    double left = (ax - cx) * (by - cy);
    double right = (ay - cy) * (bx - cx);
    double det = left - right;
    double bound = GRAIL_ORIENT_BOUND * (fabs(left) + fabs(right));
    if (det > bound || -det > bound) return det;
    return grail_orient2d_exact(ax, ay, bx, by, cx, cy);
}

/* The exact square sum x*x + y*y of two expansions, into out (room for 16); its length. */
GRAIL_GEOM int grail_lift(const double *x, int nx, const double *y, int ny, double *out) {
    int n = grail_add_product(out, 0, x, nx, x, nx, 1.0);
    return grail_add_product(out, n, y, ny, y, ny, 1.0);
}

/* The exact cross term p*q - r*s of 2-term expansions, into out (room for 16); its length. */
GRAIL_GEOM int grail_cross(const double *p, int np, const double *q, int nq, const double *r, int nr,
                           const double *s, int ns, double *out) {
    int n = grail_add_product(out, 0, p, np, q, nq, 1.0);
    return grail_add_product(out, n, r, nr, s, ns, -1.0);
}

/* The sign of incircle's determinant, exactly (the slow path, out of line: its expansions take
 * 12 KB, which inlined copies would each reserve, on the GPU in every thread's local memory):
 * alift * (bdx cdy - cdx bdy) + blift * (cdx ady - adx cdy) + clift * (adx bdy - bdx ady). */
GRAIL_GEOM_SLOW double grail_incircle_exact(double ax, double ay, double bx, double by, double cx, double cy,
                                            double dx, double dy) {
    double ex[2], ey[2], fx[2], fy[2], gx[2], gy[2], lift[16], cross[16], total[1536];
    int nex = grail_diff(ax, dx, ex), ney = grail_diff(ay, dy, ey);
    int nfx = grail_diff(bx, dx, fx), nfy = grail_diff(by, dy, fy);
    int ngx = grail_diff(cx, dx, gx), ngy = grail_diff(cy, dy, gy);
    int n = 0, nl, nc;
    nl = grail_lift(ex, nex, ey, ney, lift);
    nc = grail_cross(fx, nfx, gy, ngy, gx, ngx, fy, nfy, cross);
    n = grail_add_product(total, n, lift, nl, cross, nc, 1.0);
    nl = grail_lift(fx, nfx, fy, nfy, lift);
    nc = grail_cross(gx, ngx, ey, ney, ex, nex, gy, ngy, cross);
    n = grail_add_product(total, n, lift, nl, cross, nc, 1.0);
    nl = grail_lift(gx, ngx, gy, ngy, lift);
    nc = grail_cross(ex, nex, fy, nfy, fx, nfx, ey, ney, cross);
    n = grail_add_product(total, n, lift, nl, cross, nc, 1.0);
    return total[n - 1];
}

/* Positive when d lies inside the circle through a, b, c (counterclockwise), negative outside,
 * zero on it. */
GRAIL_GEOM double grail_incircle(double ax, double ay, double bx, double by, double cx, double cy, double dx,
                                 double dy) {
    double adx = ax - dx, ady = ay - dy, bdx = bx - dx, bdy = by - dy, cdx = cx - dx, cdy = cy - dy;
    double bdxcdy = bdx * cdy, cdxbdy = cdx * bdy, alift = adx * adx + ady * ady;
    double cdxady = cdx * ady, adxcdy = adx * cdy, blift = bdx * bdx + bdy * bdy;
    double adxbdy = adx * bdy, bdxady = bdx * ady, clift = cdx * cdx + cdy * cdy;
    double det = alift * (bdxcdy - cdxbdy) + blift * (cdxady - adxcdy) + clift * (adxbdy - bdxady);
    double permanent = (fabs(bdxcdy) + fabs(cdxbdy)) * alift + (fabs(cdxady) + fabs(adxcdy)) * blift +
                       (fabs(adxbdy) + fabs(bdxady)) * clift;
    double bound = GRAIL_INCIRCLE_BOUND * permanent;
    if (det > bound || -det > bound) return det;
    return grail_incircle_exact(ax, ay, bx, by, cx, cy, dx, dy);
}
