// The constants of disco's float32 math library (math_library.h): range
// reductions and polynomial coefficients, lowest degree first, with the form
// each polynomial is evaluated in. The Halide expressions of math_library.cc
// and the AVX-512 GELU of the oneDNN panel product
// (targets/onednn/panel_math.h) both read them: the panel's exp is the
// library's, its Phi comes from kErfc; the host's gelu_erf has its own form,
// kGeluTail (both within the accuracy the GELU tests ask).
// The polynomial arrays are printed by fit_math_coefficients.py (minimax fits,
// rounded to float from the lowest degree up); each comment gives the fit's
// worst error in units of 2^-24, relative unless said otherwise.
//
// Plain constants only: panel_gemm.cc, built for AVX-512, includes this file.
#pragma once

namespace disco::math_coefficients {

// ---- exp: x = k ln 2 + r -------------------------------------------------------

constexpr float kLog2e = 1.44269504f;
// ln 2 in two parts (Cephes'): kLn2Hi has 9 significant bits, so k * kLn2Hi is
// exact for |k| < 2^15 and x - k * kLn2Hi loses nothing.
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
// e^r = 1 + r + r^2 p(r), |r| <= ln 2 / 2 (0.0644)
constexpr float kExpRemainder[] = {0.49999994f, 0.166665211f, 0.041668389f, 0.00836871006f, 0.00138146128f};

// ---- log: x = 2^e m, m in [0.75, 1.5), f = m - 1 ---------------------------------

// log1p(f) = f - f^2/2 + f^3 P(f), f in [-0.25, 0.5] (0.0827; a ninth
// coefficient took it to 0.0154, below what log's rounding shows)
constexpr float kLogTail[] = {0.333334506f,  -0.250001073f, 0.199908257f, -0.166468725f,
                              0.144779533f, -0.13164869f,  0.1047341f,   -0.045153711f};

// log1p(e) = e + e^2 Q(e), e in [0, 1] (0.0891; softplus's log1p(e^-|x|))
constexpr float kLog1pUnit[] = {-0.499999344f, 0.333305508f,   -0.249589399f, 0.19697012f,    -0.153596222f,
                                0.106871732f,  -0.0577256158f, 0.0202353839f, -0.00332498527f};
constexpr float kLnMinNormal = -87.3365447f;  // ln 2^-126
constexpr float kLnHalfMinDenormal = -103.972076f;  // ln 2^-150 rounded up: below it e^x rounds to 0

// ---- erf ------------------------------------------------------------------------

constexpr float kSqrtHalf = 0.707106769f;  // 1 / sqrt(2)
// |z| < 1: erf(z) = z + z Q(z^2) (0.0229)
constexpr float kErfSmall[] = {0.128379166f,   -0.376126289f,    0.112836152f,   -0.0268549193f,
                               0.00519023463f, -0.000802570023f, 7.90196427e-05f};
// a >= 0: erfc(a) = t exp(-a^2 + R(t - kErfcCenter)), t = 1 / (1 + a/2),
// fitted on [0, 10] (0.178, absolute in R: relative in erfc; centred so that
// the coefficients stay small and R's rounding with them). The AVX-512 GELU
// of the oneDNN panel product (targets/onednn/panel_math.h) takes its Phi
// from it; the host's gelu_erf has its own form (kGeluTail below). a^2 is
// taken exactly, as hi + lo, so that erfc keeps its relative accuracy where
// it is tiny (a GELU of a large negative x).
constexpr float kErfcCenter = 0.65f;
constexpr float kErfc[] = {-0.467064142f, 1.37538469f,   0.00913723931f, -0.40399304f,  0.0579594448f, 0.253872693f,
                           -0.147298276f, -0.150906101f, 0.205280706f,   0.0507024415f, -0.148515314f};
// erf's tail, a in [1, 4]: erfc(a) = P(a - kErfcTailCentre) (0.159, absolute in
// erf, which needs 2^-25 of erfc there; erf = 1 - P, no exp, no division).
// The centre, a float in [2, 4) (so that a - centre is exact), is where erfc
// is within 0.001 of a multiple of 2^-24: P's constant term is that multiple,
// and 1 - c0 stays exact when LLVM folds it. erf(4) rounds to 1.
constexpr float kErfcTailCentre = 2.49990487f;
constexpr float kErfcTail[] = {0.000407159328f, -0.00217922824f, 0.00544806663f,   -0.00835497212f,  0.00862556975f,
                               -0.00611097086f, 0.0027977596f,   -0.000559774111f, -0.000258746732f, 0.00027041338f,
                               -8.12207727e-05f, -1.76794019e-05f, 1.57640952e-05f, -5.10747952e-07f, -8.95654807e-07f};
constexpr float kErfcMaxArgument = 10.0f;  // t is taken at min(a, 10): erfc(10) ~ 2e-45
// GELU's upper tail, a >= 0: Q(a) = erfc(a / sqrt 2) / 2 = e^(-a^2/2) F(t),
// t = 1 / (1 + kGeluTailScale a), F a polynomial in t - kGeluTailCenter, fitted
// for a in [0, kGeluMaxArgument] (0.505, relative). t is in [0.256, 1], so t -
// 1/2 is exact (Sterbenz). A larger scale would make F less steep in t near
// a = 0 (where t's rounding counts), but t's range would outgrow [1/4, 1].
constexpr float kGeluTailScale = 0.22f, kGeluTailCenter = 0.5f;
constexpr float kGeluMaxArgument = 13.2f;  // a^2 / 2 < 87.3: e^(-a^2/2) is normal
constexpr float kGeluTail[] = {0.0840227976f, 0.309463203f, 0.481405914f,  0.624974966f,   0.660169601f,
                               0.538667619f,  0.297703564f, 0.0500712357f, -0.0790595263f, -0.0285184048f};
// The mask that keeps 12 significant bits of a float: x = hi + lo with hi^2,
// 2 hi lo and lo^2 exact.
constexpr unsigned kHalfMantissaMask = 0xfffff000u;

// ---- atan -----------------------------------------------------------------------

// atan(z) = z + z^3 P(z^2), z in [0, 1] (0.044); |x| > 1 through pi/2 - atan(1/|x|)
constexpr float kAtan[] = {-0.333332986f, 0.199985296f,   -0.142640159f, 0.109508805f,   -0.0839930549f,
                           0.0578813329f, -0.0310968403f, 0.0108685289f, -0.00178276096f};
constexpr float kHalfPiHi = 1.57079637f, kHalfPiLo = -4.37113883e-08f;

// ---- asin, acos ------------------------------------------------------------------

// asin(z) = z + z^3 P(z^2), z in [0, 1/2] (0.00485); |x| > 1/2 through
// asin |x| = pi/2 - 2 asin(z), z = sqrt((1 - |x|) / 2)
constexpr float kAsin[] = {0.166666597f, 0.0750052184f, 0.0445133783f, 0.0318389684f, 0.0143158985f, 0.037694145f};
constexpr float kPiHi = 3.14159274f, kPiLo = -8.74227766e-08f;

// ---- atanh ----------------------------------------------------------------------

// atanh(z) = z + z^3 P(z^2), z in [0, 1/2] (0.0233); |x| >= 1/2 through
// log((1 + |x|) / (1 - |x|)) / 2
constexpr float kAtanh[] = {0.333333015f, 0.20002453f, 0.142237842f, 0.1181641f, 0.0516031235f, 0.17638059f};

// ---- sin, cos: x = k pi/2 + r, |r| <= pi/4 -------------------------------------

// The reduction runs in double: kHalfPiD1 has 30 significant bits, so k *
// kHalfPiD1 is exact for |k| < 2^23.
constexpr double kTwoOverPiD = 0.6366197723675814;
constexpr double kHalfPiD1 = 1.5707963276654482, kHalfPiD2 = -8.705515695504166e-10;
// sin(r) = r + r^3 S(r^2) (0.0666), cos(r) = 1 - r^2/2 + r^4 C(r^2) (0.00196)
constexpr float kSin[] = {-0.166666552f, 0.00833218917f, -0.000195182845f};
constexpr float kCos[] = {0.0416666456f, -0.00138873106f, 2.44325674e-05f};

// tan(r) = r + r^3 T(r^2), |r| <= pi/4 (0.0214); an odd quadrant takes -1 / tan r
constexpr float kTan[] = {0.333333492f,  0.133326769f,    0.0540586933f, 0.0212874319f,
                          0.0108241979f, 0.000102378122f, 0.00437066471f};

// ---- pow: 2^(y log2 |x|) in double ------------------------------------------------

// log1p(f) = 2 s (1 + s^2 L(s^2)), s = f / (2 + f), |s| <= 1/5 (3e-6)
constexpr double kLogAtanhDouble[] = {0.3333333335515332, 0.1999999231637479, 0.1428659144604063, 0.11067585792836732,
                                      0.10060911356686461};
// 2^r = 1 + r Q(r), |r| <= 1/2 (0.00078)
constexpr double kExp2Double[] = {0.6931471807045323,    0.24022651066561507,   0.05550410365991429,
                                  0.0096180381320119,    0.0013333935055454757, 0.00015466756330696167,
                                  1.5196156593412155e-05};
constexpr double kInvLn2D = 1.4426950408889634;

}  // namespace disco::math_coefficients
