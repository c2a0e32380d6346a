# The Cody-Waite reduction of certify/core/arith/exp64.py (exp64._reduce) in binary64 (round to nearest,
# gradual underflow): the computed r lies in [-0.3467, 0.3467] and within 33b-59 of the exact
# R = x - k ln 2.  exp64.g assumes the first, and the second through its bound on (Er - ER)/ER: the two
# scripts were one, whose Coq certificate took about eight times as long to check as the two parts'
# together.  tests/test_exp64.py checks that exp64.g assumes what this script proves, and that its
# hypotheses hold.
#
# Hypotheses:
#   |x - k L1| <= 0.34661: the code checks |fl(x - k L1)| <= 0.3466 at run time;
#   dl = ln 2 - (L1 + L2 + L3), |dl| <= 2^-140.

@rnd = float<ieee_64, ne>;

L1 = 3048493539143b-42;
L2 = 4253811898605b-86;
L3 = -7317263880564675b-142;

x = rnd(xx);
k = int<ne>(kk);

kL1 = rnd(k * L1);
kL2 = rnd(k * L2);
kL3 = rnd(k * L3);
r1 = rnd(x - kL1);
t = rnd(kL2 + kL3);
r = rnd(r1 - t);
R = x - k * (L1 + L2 + L3 + dl);

{ x in [-745.5, 709] /\ k in [-1077, 1077] /\ x - k * L1 in [-0.34661, 0.34661]
  /\ dl in [-1b-140, 1b-140]
  ->
  r in [-0.3467, 0.3467] /\ r - R in [-33b-59, 33b-59] }

r - R -> (r - (r1 - t)) + (r1 - (x - kL1)) - (kL1 - k * L1) - (t - (kL2 + kL3)) - (kL2 - k * L2)
         - (kL3 - k * L3) + k * dl;
