(* Scalar lemmas of value.expansive (proofs/value_expansive.py).  Symbolic: exp 1 > 2, field
   identities in u = exp(-2y) and one mean value theorem, on the classical reals only. *)
From Coq Require Import Reals Lra.
From Coquelicot Require Import Coquelicot.
Open Scope R_scope.

(* tanh y = (1 - u) / (1 + u) with u = exp(-2y). *)
Lemma tanh_in_u : forall y, tanh y = (1 - exp (- (2 * y))) / (1 + exp (- (2 * y))).
Proof.
  intros y. unfold tanh, sinh, cosh.
  replace (exp (- (2 * y))) with (exp (- y) * exp (- y)) by (rewrite <- exp_plus; f_equal; ring).
  assert (Hv := exp_pos (- y)).
  replace (exp y) with (/ exp (- y)) by (rewrite exp_Ropp, Rinv_inv; reflexivity).
  field. split; nra.
Qed.

(* value.expansive, certified step: the instance rho = 2, lambda = 1, D_0 = 2 expands,
   D_1 / D_0 = 2 tanh(1) > 1 (as e^2 > 4 > 3). *)
Lemma value_instance_expands : 1 < 2 * tanh 1.
Proof.
  rewrite tanh_in_u.
  assert (He := exp_ineq1 1 ltac:(lra)).
  assert (Hu : exp (- (2 * 1)) = / (exp 1 * exp 1)) by (rewrite <- exp_plus, <- exp_Ropp; f_equal; ring).
  rewrite Hu. assert (Hp := exp_pos 1).
  assert (Hw : 0 < / (exp 1 * exp 1) < / 3).
  { split; [ apply Rinv_0_lt_compat; nra | apply Rinv_lt_contravar; nra ]. }
  set (w := / (exp 1 * exp 1)) in *.
  replace (2 * ((1 - w) / (1 + w))) with (1 + (1 - 3 * w) / (1 + w)) by (field; lra).
  assert (0 < (1 - 3 * w) / (1 + w)) by (apply Rdiv_lt_0_compat; lra).
  lra.
Qed.

(* value.expansive, step "Consistent with the global bound": with u = exp(-2y),
   1 - exp(-4y) - tanh(y) = u (1 - u)(2 + u) / (1 + u) >= 0 for y >= 0. *)
Lemma value_tanh_le_global : forall y, 0 <= y -> tanh y <= 1 - exp (- (4 * y)).
Proof.
  intros y Hy. rewrite tanh_in_u.
  assert (Hu := exp_pos (- (2 * y))).
  assert (Hu1 : exp (- (2 * y)) <= 1).
  { rewrite <- exp_0. destruct (Req_dec y 0) as [-> | Hne].
    - right. f_equal. ring.
    - left. apply exp_increasing. lra. }
  replace (exp (- (4 * y))) with (exp (- (2 * y)) * exp (- (2 * y))) by (rewrite <- exp_plus; f_equal; ring).
  set (u := exp (- (2 * y))) in *.
  assert (E : (1 - u * u) - (1 - u) / (1 + u) = u * (1 - u) * (2 + u) / (1 + u)) by (field; lra).
  assert (0 <= u * (1 - u) * (2 + u) / (1 + u)).
  { unfold Rdiv. apply Rmult_le_pos; [ | left; apply Rinv_0_lt_compat; lra ].
    apply Rmult_le_pos; [ apply Rmult_le_pos | ]; lra. }
  lra.
Qed.

(* value.expansive, step "Consistent with the local guarantee": tanh x <= x for x >= 0, as
   d/dx (x - tanh x) = tanh(x)^2 >= 0 and x - tanh x = 0 at 0 (mean value theorem). *)
Lemma value_tanh_le_x : forall x, 0 <= x -> tanh x <= x.
Proof.
  intros x Hx. destruct (Rle_lt_or_eq_dec 0 x Hx) as [Hpos | <-].
  2: { unfold tanh, sinh. rewrite Ropp_0, exp_0. lra. }
  set (f := fun t => t - tanh t).
  assert (D : forall t, is_derive f t (tanh t * tanh t)).
  { intros t. unfold f, tanh, sinh, cosh.
    assert (Ha := exp_pos t). assert (Hb := exp_pos (- t)).
    auto_derive.
    - lra.
    - match goal with |- ?l = ?r => change (@eq R l r) end. field. lra. }
  destruct (MVT_cor2 f (fun t => tanh t * tanh t) 0 x Hpos) as [c [E Hc]].
  - intros c _. apply is_derive_Reals, D.
  - unfold f in E. unfold tanh at 2 in E. unfold sinh in E. rewrite Ropp_0, exp_0 in E.
    assert (0 <= tanh c * tanh c * (x - 0)) by (apply Rmult_le_pos; [ apply Rle_0_sqr | lra ]).
    lra.
Qed.
