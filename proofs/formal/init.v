(* Scalar lemmas of init.scaling (proofs/init_scaling.py): where float64 loses the contraction
   factor 1 - exp(-a D^2).  Closed by the `interval` tactic on constants with slack, so these
   rest on Coq's primitive floats as well as the classical reals. *)
From Coq Require Import Reals.
From Interval Require Import Tactic.
Open Scope R_scope.

(* init.scaling, certified step "Thresholds": 54 ln 2 in [37.42, 37.44] and
   1075 ln 2 in [745.13, 745.14]. *)
Lemma init_thresholds :
  (37.42 <= 54 * ln 2 <= 37.44) /\ (745.13 <= 1075 * ln 2 <= 745.14).
Proof. repeat split; interval. Qed.

(* init.scaling, certified step "float64 loses the contraction, arb keeps it", its real-number
   half: exp(-38) > 2^-55 and exp(-746) > 0 (what float64 rounds away). *)
Lemma init_contraction_kept : / 2 ^ 55 < exp (- 38) /\ 0 < exp (- 746).
Proof. split; [ interval | apply exp_pos ]. Qed.
