(* Scalar lemmas of residual.far and residual.two_sided (proofs/residual_*.py).  Symbolic, on
   the classical reals only. *)
From Coq Require Import Reals Lra.
Open Scope R_scope.

(* residual.far, step "It equals 1 - tanh(lambda)": D'/D = 2 / (exp(2 lambda) + 1). *)
Lemma residual_far_ratio : forall lam, 2 / (exp (2 * lam) + 1) = 1 - tanh lam.
Proof.
  intros lam. unfold tanh, sinh, cosh.
  replace (exp (2 * lam)) with (exp lam * exp lam) by (rewrite <- exp_plus; f_equal; ring).
  assert (Hv := exp_pos lam).
  replace (exp (- lam)) with (/ exp lam) by (rewrite exp_Ropp; reflexivity).
  field. split; nra.
Qed.

(* residual.far, step "Every q in (0, 1) is reached": lambda = ln(2/q - 1) / 2 > 0 gives
   D'/D = q. *)
Lemma residual_far_reach : forall q, 0 < q < 1 ->
  0 < ln (2 / q - 1) / 2 /\ 2 / (exp (2 * (ln (2 / q - 1) / 2)) + 1) = q.
Proof.
  intros q Hq.
  assert (H1 : 1 < 2 / q - 1).
  { apply (Rplus_lt_reg_r 1). unfold Rminus. rewrite Rplus_assoc, Rplus_opp_l, Rplus_0_r.
    apply (Rmult_lt_reg_r q); [ lra | ]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l; lra. }
  split.
  - assert (0 < ln (2 / q - 1)) by (rewrite <- ln_1; apply ln_increasing; lra). lra.
  - replace (2 * (ln (2 / q - 1) / 2)) with (ln (2 / q - 1)) by field.
    rewrite exp_ln by lra. field. lra.
Qed.

(* residual.two_sided, step "No fixed contraction factor near consensus": for q < 1 and
   v, a > 0, D^2 < (1 - q) / (v a) gives D'/D >= 1 - v a D^2 > q. *)
Lemma residual_no_fixed_factor : forall v a q D, 0 < v -> 0 < a -> q < 1 ->
  D * D < (1 - q) / (v * a) -> q < 1 - v * a * (D * D).
Proof.
  intros v a q D Hv Ha Hq HD.
  assert (Hva : 0 < v * a) by nra.
  apply (Rmult_lt_compat_l (v * a)) in HD; [ | exact Hva ].
  replace (v * a * ((1 - q) / (v * a))) with (1 - q) in HD by (field; lra).
  lra.
Qed.
