(* Scalar lemmas of the collapse claims: collapse.global, collapse.cubic, collapse.tanh and
   collapse.trajectory (proofs/collapse_*.py).  All proofs are symbolic: field identities and
   the signs of their factors, on the classical reals only. *)
From Coq Require Import Reals Lra.
Open Scope R_scope.

(* exp(-t) as a variable: exp(t) = 1 / exp(-t) and exp(-2t) = exp(-t)^2. *)
Lemma exp_twice : forall t, exp (- (2 * t)) = exp (- t) * exp (- t).
Proof. intros t. rewrite <- exp_plus. f_equal. ring. Qed.

Lemma exp_le_mono : forall s t, s <= t -> exp s <= exp t.
Proof.
  intros s t H. destruct (Rle_lt_or_eq_dec s t H) as [Hlt | ->].
  - left. apply exp_increasing. exact Hlt.
  - right. reflexivity.
Qed.

Lemma div_nonneg : forall a b, 0 <= a -> 0 < b -> 0 <= a / b.
Proof.
  intros a b Ha Hb. unfold Rdiv. apply Rmult_le_pos; [ exact Ha | ].
  left. apply Rinv_0_lt_compat. exact Hb.
Qed.

(* tanh t = (1 - u) / (1 + u) with u = exp(-2t). *)
Lemma tanh_as_ratio : forall t, tanh t = (1 - exp (- (2 * t))) / (1 + exp (- (2 * t))).
Proof.
  intros t. unfold tanh, sinh, cosh. rewrite exp_twice.
  assert (Hv := exp_pos (- t)).
  replace (exp t) with (/ exp (- t)) by (rewrite exp_Ropp, Rinv_inv; reflexivity).
  field. split; nra.
Qed.

(* collapse.global and collapse.cubic: the factor 1 - exp(-x) is at most x, for every x >= 0. *)
Lemma one_minus_exp_le : forall x, 0 <= x -> 1 - exp (- x) <= x.
Proof. intros x Hx. assert (H := exp_ineq1_le (- x)). lra. Qed.

(* collapse.cubic, certified step: the reduced form r(x) = (x - 1 + exp(-x)) / x^2 is positive on
   (0, 1] (r(0) = 1/2 is its limit), so 1 - exp(-x) <= x on [0, 1]. *)
Lemma cubic_compact :
  (forall x, 0 < x <= 1 -> 0 < (x - 1 + exp (- x)) / (x * x)) /\
  (forall x, 0 <= x <= 1 -> 1 - exp (- x) <= x).
Proof.
  split.
  - intros x Hx. assert (H := exp_ineq1 (- x) ltac:(lra)).
    apply Rdiv_lt_0_compat; nra.
  - intros x Hx. apply one_minus_exp_le. lra.
Qed.

(* collapse.cubic, tail step: h(x) = (x - 1) + exp(-x) > 0 for x >= 1. *)
Lemma cubic_tail : forall x, 1 <= x -> 0 < x - 1 + exp (- x).
Proof. intros x Hx. assert (H := exp_pos (- x)). lra. Qed.

(* collapse.tanh: with u = exp(-L/2), (1 - u) - tanh(L/4) = u (1 - u) / (1 + u). *)
Lemma tanh_quarter_gap : forall L,
  (1 - exp (- (L / 2))) - tanh (L / 4) = exp (- (L / 2)) * (1 - exp (- (L / 2))) / (1 + exp (- (L / 2))).
Proof.
  intros L. rewrite tanh_as_ratio. replace (2 * (L / 4)) with (L / 2) by field.
  assert (Hu := exp_pos (- (L / 2))). field. lra.
Qed.

(* tanh(L/4) <= 1 - exp(-L/2) for L >= 0: the gap above is a product of nonnegative factors. *)
Lemma tanh_quarter_le : forall L, 0 <= L -> tanh (L / 4) <= 1 - exp (- (L / 2)).
Proof.
  intros L HL.
  assert (Hu := exp_pos (- (L / 2))).
  assert (Hu1 : exp (- (L / 2)) <= 1)
    by (rewrite <- exp_0; apply exp_le_mono; lra).
  assert (G := tanh_quarter_gap L).
  assert (0 <= exp (- (L / 2)) * (1 - exp (- (L / 2))) / (1 + exp (- (L / 2)))).
  { apply div_nonneg; nra. }
  lra.
Qed.

(* collapse.tanh, step "Sharper than collapse.global": with y = exp(-x/2),
   (1 - exp(-x)) - tanh(x/4) = y (1 - y)(2 + y) / (1 + y) >= 0. *)
Lemma tanh_quarter_le_global : forall x, 0 <= x -> tanh (x / 4) <= 1 - exp (- x).
Proof.
  intros x Hx.
  assert (Hy := exp_pos (- (x / 2))).
  assert (Hy1 : exp (- (x / 2)) <= 1) by (rewrite <- exp_0; apply exp_le_mono; lra).
  assert (Hsq : exp (- x) = exp (- (x / 2)) * exp (- (x / 2))).
  { rewrite <- exp_plus. f_equal. field. }
  assert (E : (1 - exp (- x)) - tanh (x / 4)
              = exp (- (x / 2)) * (1 - exp (- (x / 2))) * (2 + exp (- (x / 2))) / (1 + exp (- (x / 2)))).
  { rewrite tanh_as_ratio, Hsq. replace (2 * (x / 4)) with (x / 2) by field. field. lra. }
  assert (0 <= exp (- (x / 2)) * (1 - exp (- (x / 2))) * (2 + exp (- (x / 2))) / (1 + exp (- (x / 2)))).
  { apply div_nonneg; [ apply Rmult_le_pos; [ nra | lra ] | lra ]. }
  lra.
Qed.

(* The logistic function: the two attention weights of a query row when n = 2. *)
Definition sigma (t : R) : R := 1 / (1 + exp (- t)).

Lemma cosh_ge_1 : forall w, 1 <= cosh w.
Proof.
  intros w. unfold cosh. assert (Ha := exp_pos w).
  replace (exp (- w)) with (/ exp w) by (rewrite exp_Ropp; reflexivity).
  apply Rmult_le_reg_r with (2 * exp w); [ lra | ].
  replace ((exp w + / exp w) / 2 * (2 * exp w)) with (exp w * exp w + 1) by (field; lra).
  assert (H := Rle_0_sqr (exp w - 1)). unfold Rsqr in H. lra.
Qed.

(* The n = 2 case of collapse.tanh: two weights sigma(w +- L/2) differ by at most tanh(L/4).
   With a = exp(w) and b = exp(L/2) >= 1,
     tanh(L/4) - (sigma(w + L/2) - sigma(w - L/2)) = (b - 1) b (a - 1)^2 / ((b + 1)(a b + 1)(a + b)),
   and (a - 1)^2 = 2 a (cosh w - 1) >= 0. *)
Lemma sigma_pair_le_tanh : forall w L, 0 <= L ->
  sigma (w + L / 2) - sigma (w - L / 2) <= tanh (L / 4).
Proof.
  intros w L HL. unfold sigma. rewrite tanh_as_ratio.
  replace (2 * (L / 4)) with (L / 2) by field.
  assert (Ha := exp_pos w). assert (Hb := exp_pos (L / 2)).
  assert (Hb1 : 1 <= exp (L / 2)) by (rewrite <- exp_0; apply exp_le_mono; lra).
  assert (Hc := cosh_ge_1 w). unfold cosh in Hc.
  replace (exp (- (w + L / 2))) with (/ (exp w * exp (L / 2)))
    by (rewrite <- exp_plus, exp_Ropp; reflexivity).
  replace (exp (- (w - L / 2))) with (exp (L / 2) / exp w)
    by (unfold Rminus; rewrite Ropp_plus_distr, Ropp_involutive, exp_plus, exp_Ropp; field; lra).
  replace (exp (- (L / 2))) with (/ exp (L / 2)) by (rewrite exp_Ropp; reflexivity).
  replace (exp (- w)) with (/ exp w) in Hc by (rewrite exp_Ropp; reflexivity).
  set (a := exp w) in *. set (b := exp (L / 2)) in *.
  assert (Hsq : 0 <= (a - 1) * (a - 1)).
  { replace ((a - 1) * (a - 1)) with (2 * a * ((a + / a) / 2 - 1)) by (field; lra).
    apply Rmult_le_pos; lra. }
  assert (E : (1 - / b) / (1 + / b) - (1 / (1 + / (a * b)) - 1 / (1 + b / a))
              = (b - 1) * b * ((a - 1) * (a - 1)) / ((b + 1) * (a * b + 1) * (a + b))).
  { field. repeat split; nra. }
  assert (0 <= (b - 1) * b * ((a - 1) * (a - 1)) / ((b + 1) * (a * b + 1) * (a + b))).
  { apply div_nonneg; [ apply Rmult_le_pos; [ nra | exact Hsq ] | ].
    apply Rmult_lt_0_compat; [ apply Rmult_lt_0_compat | ]; nra. }
  lra.
Qed.

(* collapse.trajectory, certified step: h(y) = 1 + (2y - 1) exp(-y) > 0 on (0, 1/2]: there
   0 <= 1 - 2y < 1 and 0 < exp(-y) < 1, so (1 - 2y) exp(-y) < 1. *)
Lemma trajectory_h_pos : forall y, 0 < y <= 1 / 2 -> 0 < 1 + (2 * y - 1) * exp (- y).
Proof.
  intros y Hy. assert (He := exp_pos (- y)).
  assert (He1 : exp (- y) < 1) by (rewrite <- exp_0; apply exp_increasing; lra).
  nra.
Qed.

(* collapse.trajectory, tail step: h(y) >= 1 for y >= 1/2. *)
Lemma trajectory_h_tail : forall y, 1 / 2 <= y -> 1 <= 1 + (2 * y - 1) * exp (- y).
Proof. intros y Hy. assert (He := exp_pos (- y)). nra. Qed.
