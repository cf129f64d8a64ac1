#!/usr/bin/env python3
"""Fits the polynomials of lowering/math_coefficients.h and prints its arrays.

Each polynomial is a weighted minimax fit on a dense Chebyshev grid (Lawson's
iteration of weighted least squares, in double precision, against mpmath
references at 40 digits). Float coefficients are then rounded to float32 from
the lowest degree up, refitting the higher ones after each rounding so they
absorb its error. Prints, per array, the worst error of the rounded fit in
units of 2^-24 (relative where the evaluation form makes it relative).

    /usr/bin/python3 lowering/fit_math_coefficients.py   # needs numpy, mpmath
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def lawson(basis, target, weight, iters=300):
    """Minimizes max |weight * (basis @ c - target)|; returns (error, c)."""
    u = np.ones(len(target)) / len(target)
    best = None
    for _ in range(iters):
        sw = np.sqrt(u) * weight
        c, *_ = np.linalg.lstsq(basis * sw[:, None], target * sw, rcond=None)
        e = np.abs(weight * (basis @ c - target))
        if best is None or e.max() < best[0]:
            best = (e.max(), c)
        if e.max() == 0:
            break
        u = u * e
        u /= u.sum()
    return best


def rounded_fit(basis, target, weight):
    """Float32 coefficients, rounded lowest degree first (each the better of
    its nearest floats given a refit of the higher ones)."""
    fixed = []
    for j in range(basis.shape[1]):
        rest = target - (basis[:, :j] @ np.array(fixed) if fixed else 0)
        _, c = lawson(basis[:, j:], rest, weight)
        v = np.float32(c[0])
        best = None
        for cand in (v, np.nextafter(v, np.float32(np.inf)), np.nextafter(v, np.float32(-np.inf))):
            left = rest - basis[:, j] * float(cand)
            if j + 1 == basis.shape[1]:
                err = np.abs(weight * left).max()
            else:
                err, _ = lawson(basis[:, j + 1:], left, weight, iters=150)
            if best is None or err < best[0]:
                best = (err, float(cand))
        fixed.append(best[1])
    c = np.array(fixed)
    return c, np.abs(weight * (basis @ c - target)).max()


def grid(a, b, n=2000):
    k = np.arange(n)
    return (a + b) / 2 - (b - a) / 2 * np.cos(np.pi * (k + 0.5) / n)


def mpf(v):
    return mp.mpf(float(v))


def powers(x, n):
    return np.stack([x**i for i in range(n)], 1)


def emit(name, comment, coeffs, err, double=False):
    what = "fit" if double else "rounded fit"
    print(f"// {comment} ({what}: {err / 2**-24:.3g} x 2^-24)")
    kind = "double" if double else "float"
    body = ", ".join(repr(float(c)) if double else f"{float(np.float32(c)):.9g}f" for c in coeffs)
    print(f"constexpr {kind} {name}[] = {{{body}}};")


def main():
    # e^r = 1 + r + r^2 p(r), |r| <= ln 2 / 2: kept from Cephes-style fit already in use (checked here).
    r = grid(-0.3466, 0.3466)
    p = np.array([4.9999994040e-1, 1.6666521132e-1, 4.1668388993e-2, 8.3687100559e-3, 1.3814612757e-3], np.float32)
    ref = np.array([float(mp.exp(mpf(v))) for v in r])
    val = np.array([float(1 + mpf(v) + mpf(v) ** 2 * sum(mpf(p[i]) * mpf(v) ** i for i in range(5))) for v in r])
    emit("kExpRemainder", "e^r = 1 + r + r^2 p(r), |r| <= ln 2 / 2", p, np.abs(val / ref - 1).max())

    # log1p(f) = f - f^2/2 + f^3 P(f), f in [-0.25, 0.5]; relative.
    f = grid(-0.25, 0.5)
    f = f[np.abs(f) > 1e-6]
    tail = np.array([float((mp.log1p(mpf(v)) - mpf(v) + mpf(v) ** 2 / 2) / mpf(v) ** 3) for v in f])
    w = f**3 / np.array([float(mp.log1p(mpf(v))) for v in f])
    emit("kLogTail", "log1p(f) = f - f^2/2 + f^3 P(f), f in [-0.25, 0.5]", *rounded_fit(powers(f, 8), tail, w))

    # log1p(e) = e + e^2 Q(e), e in [0, 1]; relative (softplus's log1p(e^-|x|)).
    e = grid(1e-4, 1.0)
    tail = np.array([float((mp.log1p(mpf(v)) - mpf(v)) / mpf(v) ** 2) for v in e])
    w = e**2 / np.array([float(mp.log1p(mpf(v))) for v in e])
    emit("kLog1pUnit", "log1p(e) = e + e^2 Q(e), e in [0, 1]", *rounded_fit(powers(e, 9), tail, w))

    # erf(z) = z + z Q(z^2), |z| <= 1; relative.
    z = grid(1e-4, 1.0)
    ratio = np.array([float(mp.erf(mpf(v)) / mpf(v)) for v in z])
    emit("kErfSmall", "erf(z) = z + z Q(z^2), |z| <= 1", *rounded_fit(powers(z * z, 7), ratio - 1, 1 / ratio))

    # erfc(a) = t exp(-a^2 + R(t - 0.65)), t = 1 / (1 + a / 2), a in [0, 10]; R absolute (erfc
    # relative). In t - 0.65 rather than t the coefficients stay small: R's float rounding is 2.4
    # x 2^-24 at worst instead of 7.3.
    t = grid(1 / (1 + 0.5 * 10), 1.0)
    a = (1 / t - 1) / 0.5
    target = np.array([float(mp.log(mp.erfc(mpf(av)) / mpf(tv)) + mpf(av) ** 2) for av, tv in zip(a, t)])
    emit("kErfc", "erfc(a) = t exp(-a^2 + R(t - 0.65)), t = 1 / (1 + a/2), a in [0, 10]",
         *rounded_fit(powers(t - 0.65, 11), target, np.ones_like(t)))

    # GELU's upper tail: Q(a) = erfc(a / sqrt 2) / 2 = e^(-a^2/2) F(t), t = 1 / (1 + 0.22 a),
    # a in [0, 13.2]; F a polynomial in t - 1/2, relative.
    t = grid(1 / (1 + 0.22 * 13.2), 1.0, 1500)
    a = (1 / t - 1) / 0.22
    f = np.array([float(mp.erfc(mpf(v) / mp.sqrt(2)) / 2 * mp.exp(mpf(v) ** 2 / 2)) for v in a])
    emit("kGeluTail", "Q(a) = e^(-a^2/2) F(t), t = 1 / (1 + 0.22 a), a in [0, 13.2]",
         *rounded_fit(powers(t - 0.5, 10), f, 1 / f))

    # erf's tail, 1 - erfc(a) for a in [1, 4]: erfc(a) = P(a - m), absolute (in erf), no exp. The
    # centre m is the float near 2.5 (in [2, 4), so a - m is exact) whose erfc is nearest a
    # multiple of 2^-24; P's constant term is that multiple, so 1 - c0 is exact.
    best = None
    for k in range(-400, 400):
        m = np.float32(2.5) + np.float32(k) * np.float32(2**-22)
        q = float(mp.erfc(mpf(m)) * 2**24)
        if best is None or abs(q - round(q)) < best[0]:
            best = (abs(q - round(q)), m, round(q))
    _, m, q = best
    print(f"constexpr float kErfcTailCentre = {float(m):.9g}f;")
    a = grid(1.0, 4.0)
    target = np.array([float(mp.erfc(mpf(v)) - q * 2.0**-24) for v in a])
    c, err = rounded_fit(powers(a - float(m), 15)[:, 1:], target, np.ones_like(a))
    emit("kErfcTail", "erfc(a) = P(a - m), a in [1, 4], absolute", [q * 2.0**-24] + list(c), err)

    # atan(z) = z + z^3 P(z^2), z in [0, 1]; relative.
    z = grid(1e-4, 1.0)
    tail = np.array([float((mp.atan(mpf(v)) - mpf(v)) / mpf(v) ** 3) for v in z])
    w = z**3 / np.array([float(mp.atan(mpf(v))) for v in z])
    emit("kAtan", "atan(z) = z + z^3 P(z^2), z in [0, 1]", *rounded_fit(powers(z * z, 9), tail, w))

    # asin(z) = z + z^3 P(z^2), z in [0, 1/2]; relative. asin and acos take |x| > 1/2
    # through z = sqrt((1 - |x|) / 2).
    z = grid(1e-4, 0.5)
    tail = np.array([float((mp.asin(mpf(v)) - mpf(v)) / mpf(v) ** 3) for v in z])
    w = z**3 / np.array([float(mp.asin(mpf(v))) for v in z])
    emit("kAsin", "asin(z) = z + z^3 P(z^2), z in [0, 1/2]", *rounded_fit(powers(z * z, 6), tail, w))

    # atanh(z) = z + z^3 P(z^2), z in [0, 1/2]; relative. Above 1/2 atanh takes
    # log((1 + |x|) / (1 - |x|)) / 2.
    z = grid(1e-4, 0.5)
    tail = np.array([float((mp.atanh(mpf(v)) - mpf(v)) / mpf(v) ** 3) for v in z])
    w = z**3 / np.array([float(mp.atanh(mpf(v))) for v in z])
    emit("kAtanh", "atanh(z) = z + z^3 P(z^2), z in [0, 1/2]", *rounded_fit(powers(z * z, 6), tail, w))

    # sin(r) = r + r^3 S(r^2), cos(r) = 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4; relative.
    r = grid(1e-4, np.pi / 4 * 1.0001)
    tail = np.array([float((mp.sin(mpf(v)) - mpf(v)) / mpf(v) ** 3) for v in r])
    w = r**3 / np.array([float(mp.sin(mpf(v))) for v in r])
    emit("kSin", "sin(r) = r + r^3 S(r^2), |r| <= pi/4", *rounded_fit(powers(r * r, 3), tail, w))
    tail = np.array([float((mp.cos(mpf(v)) - 1 + mpf(v) ** 2 / 2) / mpf(v) ** 4) for v in r])
    w = r**4 / np.array([float(mp.cos(mpf(v))) for v in r])
    emit("kCos", "cos(r) = 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4", *rounded_fit(powers(r * r, 3), tail, w))

    # tan(r) = r + r^3 T(r^2), |r| <= pi/4; relative.
    tail = np.array([float((mp.tan(mpf(v)) - mpf(v)) / mpf(v) ** 3) for v in r])
    w = r**3 / np.array([float(mp.tan(mpf(v))) for v in r])
    emit("kTan", "tan(r) = r + r^3 T(r^2), |r| <= pi/4", *rounded_fit(powers(r * r, 7), tail, w))

    # pow's double-precision steps: 2^r = 1 + r Q(r), |r| <= 1/2, and
    # log1p(f) = 2 s (1 + s^2 L(s^2)), s = f / (2 + f) in [-1/7, 1/5]; relative, double coefficients.
    r = grid(-0.5, 0.5)
    r = r[np.abs(r) > 1e-9]
    target = np.array([float((mp.power(2, mpf(v)) - 1) / mpf(v)) for v in r])
    w = r / np.array([float(mp.power(2, mpf(v))) for v in r])
    err, c = lawson(powers(r, 7), target, w)
    emit("kExp2Double", "2^r = 1 + r Q(r), |r| <= 1/2", c, err, double=True)
    s = grid(1e-3, 0.2)
    target = np.array([float((mp.atanh(mpf(v)) / mpf(v) - 1) / mpf(v) ** 2) for v in s])
    err, c = lawson(powers(s * s, 5), target, s * s)
    emit("kLogAtanhDouble", "log1p(f) = 2 s (1 + s^2 L(s^2)), s = f / (2 + f), |s| <= 1/5", c, err, double=True)


if __name__ == "__main__":
    main()
