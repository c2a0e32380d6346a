# init.scaling, step "IEEE binary64 rounding at the thresholds": in binary64 with round to
# nearest, ties to even, 1 - 2^-54 (a tie) rounds to 1 while 1 - 2^-53 is kept, and 2^-1075
# (a tie below the smallest subnormal) rounds to 0 while 2^-1074 is kept.
@rnd = float<ieee_64, ne>;
below_one_tie = rnd(1 - 1b-54);
below_one = rnd(1 - 1b-53);
under_tie = rnd(1b-1075);
smallest = rnd(1b-1074);
{ below_one_tie - 1 in [0, 0] /\ below_one - (1 - 1b-53) in [0, 0]
  /\ under_tie in [0, 0] /\ smallest in [1b-1074, 1b-1074] }
