# The error of certify/core/arith/exp64.py: the polynomial evaluation in binary64 (round to nearest,
# gradual underflow) at the reduced argument r of exp64_reduction.g, which proves that r is a binary64
# in [-0.3467, 0.3467] within 33b-59 of the exact R = x - k ln 2.  The goal's bound is
# exp64.REL_ERROR = 2.7e-16 written exactly (with `?` in its place Gappa prints the tightest bound
# it proves, 2.26e-16).  tests/test_exp64.py runs Gappa on this file, checks that its bound is
# exp64.REL_ERROR and its hypotheses hold, and checks the Coq certificate (gappa -Bcoq, then coqc
# with libcoq-gappa).
#
# Facts about exp, which Gappa cannot state, enter as hypotheses; the tests re-derive each in arb:
#   Er = exp(r), ER = exp(R) (|r|, |R| <= 0.3467);
#   (Q0 - Er)/Er <= 65b-63: the polynomial with binary64 coefficients in exact arithmetic against
#     exp on |r| <= 0.3467 (coefficient rounding and Taylor remainder, exp64.derive_error_terms);
#   (Er - ER)/ER <= 34b-59: at most exp(|r - R|) - 1, with |r - R| <= 33b-59 (exp64_reduction.g).

@rnd = float<ieee_64, ne>;

C2 = 1b-1;
C3 = 6004799503160661b-55;
C4 = 6004799503160661b-57;
C5 = 4803839602528529b-59;
C6 = 6405119470038039b-62;
C7 = 3660068268593165b-64;
C8 = 3660068268593165b-67;
C9 = 1626697008263629b-69;
C10 = 1301357606610903b-72;
C11 = 1892883791434041b-76;
C12 = 630961263811347b-78;
C13 = 6212541674450185b-85;

r = rnd(rr);

# Horner, as in exp64._horner, and the same polynomial in exact arithmetic at the computed r
q12 = rnd(rnd(C13 * r) + C12);
q11 = rnd(rnd(q12 * r) + C11);
q10 = rnd(rnd(q11 * r) + C10);
q9 = rnd(rnd(q10 * r) + C9);
q8 = rnd(rnd(q9 * r) + C8);
q7 = rnd(rnd(q8 * r) + C7);
q6 = rnd(rnd(q7 * r) + C6);
q5 = rnd(rnd(q6 * r) + C5);
q4 = rnd(rnd(q5 * r) + C4);
q3 = rnd(rnd(q4 * r) + C3);
q2 = rnd(rnd(q3 * r) + C2);
q1 = rnd(rnd(q2 * r) + 1);
p = rnd(rnd(q1 * r) + 1);

Q12 = C13 * r + C12;
Q11 = Q12 * r + C11;
Q10 = Q11 * r + C10;
Q9 = Q10 * r + C9;
Q8 = Q9 * r + C8;
Q7 = Q8 * r + C7;
Q6 = Q7 * r + C6;
Q5 = Q6 * r + C5;
Q4 = Q5 * r + C4;
Q3 = Q4 * r + C3;
Q2 = Q3 * r + C2;
Q1 = Q2 * r + 1;
Q0 = Q1 * r + 1;

{ r in [-0.3467, 0.3467]
  /\ Er in [0.7, 1.42] /\ (Q0 - Er) / Er in [-65b-63, 65b-63]
  /\ ER in [0.7, 1.42] /\ (Er - ER) / ER in [-34b-59, 34b-59]
  ->
  (p - ER) / ER in [-5476250592985951b-104, 5476250592985951b-104] }

(p - ER) / ER -> (p - Q0) / Q0 + (Q0 - ER) / ER + ((p - Q0) / Q0) * ((Q0 - ER) / ER) { Q0 <> 0, ER <> 0 };
(Q0 - ER) / ER -> (Q0 - Er) / Er + (Er - ER) / ER + ((Q0 - Er) / Er) * ((Er - ER) / ER) { Er <> 0, ER <> 0 };
$ r in 4;
