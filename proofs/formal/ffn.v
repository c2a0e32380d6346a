(* Scalar lemmas of ffn.lipschitz (proofs/ffn_lipschitz.py): Lip(GELU) = sup |GELU'| = M with
   M = GELU'(sqrt 2) = (1 + erf 1) / 2 + 1 / (e sqrt pi).

   The `interval` tactic has no erf, so erf is defined by its integral and the scaffolding is
   symbolic: the fundamental theorem of calculus (auto_derive differentiates RInt) gives
   GELU'' = phi (2 - x^2), the mean value theorem then makes GELU' increase on [-sqrt 2, sqrt 2]
   and decrease outside.  Only the value of M itself is enclosed numerically, by `integral`
   (interval arithmetic with Taylor models on the integrand of erf 1). *)
From Coq Require Import Reals Lra.
From Coquelicot Require Import Coquelicot.
From Interval Require Import Tactic.
Open Scope R_scope.

(* erf x = 2 / sqrt(pi) * integral_0^x exp(-t^2) dt; Phi(x) = (1 + erf(x / sqrt 2)) / 2 is the
   standard normal cdf, phi its density, GELU(x) = x Phi(x) and GELU'(x) = Phi(x) + x phi(x). *)
Definition gauss (t : R) : R := exp (- (t * t)).
Definition erf (x : R) : R := 2 / sqrt PI * RInt gauss 0 x.
Definition phi (x : R) : R := exp (- (x * x) / 2) / sqrt (2 * PI).
Definition gelu_prime (x : R) : R := (1 + erf (x / sqrt 2)) / 2 + x * phi x.

Lemma gauss_continuous : forall t, continuous gauss t.
Proof. intros t. apply (ex_derive_continuous (K := R_AbsRing) (V := R_NormedModule)). unfold gauss. auto_derive. exact I. Qed.

Lemma ex_RInt_gauss : forall a b, ex_RInt gauss a b.
Proof. intros a b. apply (ex_RInt_continuous (V := R_CompleteNormedModule)). intros z _. apply gauss_continuous. Qed.

Lemma sqrt2_pos : 0 < sqrt 2. Proof. apply sqrt_lt_R0. lra. Qed.
Lemma sqrt_pi_pos : 0 < sqrt PI. Proof. apply sqrt_lt_R0, PI_RGT_0. Qed.
Lemma sqrt2_sq : sqrt 2 * sqrt 2 = 2. Proof. apply sqrt_sqrt. lra. Qed.

(* GELU''(x) = phi(x) (2 - x^2). *)
Lemma gelu_second_derivative : forall x, is_derive gelu_prime x (phi x * (2 - x * x)).
Proof.
  intros x. unfold gelu_prime, erf, phi.
  auto_derive.
  - split; [ apply ex_RInt_gauss | split; [ | exact I ] ].
    apply filter_forall. intros t. apply continuity_pt_filterlim, gauss_continuous.
  - unfold gauss. assert (Hs := sqrt2_pos). assert (Hp := sqrt_pi_pos). assert (H2 := sqrt2_sq).
    replace (x * / sqrt 2 * (x * / sqrt 2)) with (x * x / 2).
    2: { transitivity (x * x / (sqrt 2 * sqrt 2)); [ rewrite H2; reflexivity | field; lra ]. }
    rewrite sqrt_mult by (try lra; left; apply PI_RGT_0).
    replace (- (x * x / 2)) with (- (x * x) / 2) by field.
    replace (- (x * x) * / 2) with (- (x * x) / 2) by field.
    field. lra.
Qed.

(* The stated constant. *)
Definition M : R := (1 + erf 1) / 2 + 1 / (exp 1 * sqrt PI).

Lemma phi_pos : forall x, 0 < phi x.
Proof.
  intros x. unfold phi. apply Rdiv_lt_0_compat; [ apply exp_pos | ].
  apply sqrt_lt_R0. assert (H := PI_RGT_0). lra.
Qed.

Lemma gelu_mvt : forall a b, a < b ->
  exists c, a < c < b /\ gelu_prime b - gelu_prime a = phi c * (2 - c * c) * (b - a).
Proof.
  intros a b Hab.
  destruct (MVT_cor2 gelu_prime (fun c => phi c * (2 - c * c)) a b Hab) as [c [Hc Hin]].
  - intros c _. apply is_derive_Reals, gelu_second_derivative.
  - exists c. split; [ exact Hin | exact Hc ].
Qed.

Lemma erf_nonneg : forall y, 0 <= y -> 0 <= erf y.
Proof.
  intros y Hy. unfold erf. apply Rmult_le_pos.
  - apply Rdiv_le_0_compat; [ lra | apply sqrt_pi_pos ].
  - apply RInt_ge_0; [ exact Hy | apply ex_RInt_gauss | intros t _; left; apply exp_pos ].
Qed.

Lemma erf_nonpos : forall y, y <= 0 -> erf y <= 0.
Proof.
  intros y Hy. unfold erf. rewrite <- (opp_opp (RInt gauss 0 y)), opp_RInt_swap by apply ex_RInt_gauss.
  assert (0 <= RInt gauss y 0).
  { apply RInt_ge_0; [ exact Hy | apply ex_RInt_gauss | intros t _; left; apply exp_pos ]. }
  assert (0 < 2 / sqrt PI) by (apply Rdiv_lt_0_compat; [ lra | apply sqrt_pi_pos ]).
  change (opp (RInt gauss y 0)) with (- RInt gauss y 0). nra.
Qed.

(* Phi <= 1/2 and x phi <= 0 left of 0; both reversed right of 0. *)
Lemma gelu_prime_half_split : forall x,
  (x <= 0 -> gelu_prime x <= 1 / 2) /\ (0 <= x -> 1 / 2 <= gelu_prime x).
Proof.
  intros x. assert (Hs := sqrt2_pos). assert (Hp := phi_pos x). unfold gelu_prime. split; intros Hx.
  - assert (erf (x / sqrt 2) <= 0) by (apply erf_nonpos; unfold Rdiv;
      apply Rmult_le_0_r; [ exact Hx | left; apply Rinv_0_lt_compat; exact Hs ]).
    nra.
  - assert (0 <= erf (x / sqrt 2)) by (apply erf_nonneg, Rdiv_le_0_compat; lra).
    nra.
Qed.

(* GELU' is largest at sqrt 2 (mean value theorem on each side) ... *)
Lemma gelu_prime_max : forall x, gelu_prime x <= gelu_prime (sqrt 2).
Proof.
  intros x. assert (Hs := sqrt2_pos). assert (H2 := sqrt2_sq).
  destruct (Rle_or_lt x 0) as [Hx | Hx].
  - assert (A := proj1 (gelu_prime_half_split x) Hx).
    assert (B := proj2 (gelu_prime_half_split (sqrt 2)) (Rlt_le _ _ Hs)). lra.
  - destruct (Rtotal_order x (sqrt 2)) as [Hlt | [Heq | Hgt]].
    + destruct (gelu_mvt x (sqrt 2) Hlt) as [c [Hc E]].
      assert (Hp := phi_pos c).
      assert (0 <= 2 - c * c) by nra.
      assert (0 <= phi c * (2 - c * c) * (sqrt 2 - x)) by (apply Rmult_le_pos; nra).
      lra.
    + rewrite Heq. lra.
    + destruct (gelu_mvt (sqrt 2) x Hgt) as [c [Hc E]].
      assert (Hp := phi_pos c).
      assert (2 - c * c <= 0) by nra.
      assert (phi c * (2 - c * c) * (x - sqrt 2) <= 0).
      { assert (phi c * (2 - c * c) <= 0) by nra. nra. }
      lra.
Qed.

(* ... and smallest at -sqrt 2. *)
Lemma gelu_prime_min : forall x, gelu_prime (- sqrt 2) <= gelu_prime x.
Proof.
  intros x. assert (Hs := sqrt2_pos). assert (H2 := sqrt2_sq).
  destruct (Rle_or_lt 0 x) as [Hx | Hx].
  - assert (A := proj2 (gelu_prime_half_split x) Hx).
    assert (B := proj1 (gelu_prime_half_split (- sqrt 2)) ltac:(lra)). lra.
  - destruct (Rtotal_order x (- sqrt 2)) as [Hlt | [Heq | Hgt]].
    + destruct (gelu_mvt x (- sqrt 2) Hlt) as [c [Hc E]].
      assert (Hp := phi_pos c).
      assert (2 - c * c <= 0) by nra.
      assert (phi c * (2 - c * c) * (- sqrt 2 - x) <= 0).
      { assert (phi c * (2 - c * c) <= 0) by nra. nra. }
      lra.
    + rewrite Heq. lra.
    + destruct (gelu_mvt (- sqrt 2) x Hgt) as [c [Hc E]].
      assert (Hp := phi_pos c).
      assert (0 <= 2 - c * c) by nra.
      assert (0 <= phi c * (2 - c * c) * (x - - sqrt 2)) by (apply Rmult_le_pos; nra).
      lra.
Qed.

(* ffn.lipschitz, step "The constant": M = GELU'(sqrt 2), where GELU''(sqrt 2) = 0. *)
Lemma gelu_prime_at_sqrt2 : gelu_prime (sqrt 2) = M /\ phi (sqrt 2) * (2 - sqrt 2 * sqrt 2) = 0.
Proof.
  assert (Hs := sqrt2_pos). assert (Hp := sqrt_pi_pos). assert (H2 := sqrt2_sq).
  assert (He := exp_pos 1).
  split; [ | rewrite H2; ring ].
  unfold gelu_prime, M, phi.
  replace (sqrt 2 / sqrt 2) with 1 by (field; lra).
  replace (- (sqrt 2 * sqrt 2) / 2) with (- 1) by (rewrite H2; field).
  rewrite sqrt_mult by (try lra; left; apply PI_RGT_0).
  replace (exp (-1)) with (/ exp 1) by (rewrite <- exp_Ropp; reflexivity).
  field. lra.
Qed.

Lemma gelu_prime_at_minus_sqrt2 : gelu_prime (- sqrt 2) = (1 + erf (- 1)) / 2 - 1 / (exp 1 * sqrt PI).
Proof.
  assert (Hs := sqrt2_pos). assert (Hp := sqrt_pi_pos). assert (H2 := sqrt2_sq).
  assert (He := exp_pos 1).
  unfold gelu_prime, phi.
  replace (- sqrt 2 / sqrt 2) with (- 1) by (field; lra).
  replace (- (- sqrt 2 * - sqrt 2) / 2) with (- 1) by (replace (- sqrt 2 * - sqrt 2) with (sqrt 2 * sqrt 2) by ring; rewrite H2; field).
  rewrite sqrt_mult by (try lra; left; apply PI_RGT_0).
  replace (exp (-1)) with (/ exp 1) by (rewrite <- exp_Ropp; reflexivity).
  field. lra.
Qed.

(* ffn.lipschitz, certified step: M in [1.1289, 1.1290] and M > 1 (erf as its integral). *)
Lemma gelu_constant_bounds : 1.1289 <= M <= 1.1290 /\ 1 < M.
Proof. unfold M, erf, gauss. repeat split; integral with (i_prec 40). Qed.

Lemma exp_le_one : forall s, s <= 0 -> exp s <= 1.
Proof.
  intros s Hs. rewrite <- exp_0. destruct (Rle_lt_or_eq_dec s 0 Hs) as [Hlt | ->].
  - left. apply exp_increasing. exact Hlt.
  - right. reflexivity.
Qed.

(* erf(-1) >= -2 / sqrt(pi) >= -2, as exp(-t^2) <= 1 and pi >= 1. *)
Lemma erf_minus_one_bound : - 2 <= erf (- 1).
Proof.
  unfold erf. rewrite <- (opp_opp (RInt gauss 0 (- 1))), opp_RInt_swap by apply ex_RInt_gauss.
  assert (Hle : RInt gauss (- 1) 0 <= RInt (fun _ => 1) (- 1) 0).
  { apply RInt_le; [ lra | apply ex_RInt_gauss | apply ex_RInt_const | ].
    intros t _. unfold gauss. apply exp_le_one. assert (0 <= t * t) by nra. lra. }
  rewrite RInt_const in Hle. change (scal (0 - - 1) 1) with ((0 - - 1) * 1) in Hle.
  assert (Hge : 0 <= RInt gauss (- 1) 0).
  { apply RInt_ge_0; [ lra | apply ex_RInt_gauss | intros t _; left; apply exp_pos ]. }
  assert (Hp := sqrt_pi_pos).
  assert (Hpi : 1 <= sqrt PI).
  { rewrite <- sqrt_1. apply sqrt_le_1_alt. assert (H := PI2_1). lra. }
  assert (Hc : 2 / sqrt PI <= 2).
  { apply (Rmult_le_reg_r (sqrt PI)); [ exact Hp | ]. unfold Rdiv.
    rewrite Rmult_assoc, Rinv_l by lra. nra. }
  assert (0 < 2 / sqrt PI) by (apply Rdiv_lt_0_compat; lra).
  change (opp (RInt gauss (- 1) 0)) with (- RInt gauss (- 1) 0). nra.
Qed.

(* ffn.lipschitz, steps "Maximum of |GELU'|" and "Tails": sup |GELU'| <= M on the whole line
   (GELU'(-sqrt 2) = 1 - M > -M). *)
Lemma gelu_prime_global : forall x, Rabs (gelu_prime x) <= M.
Proof.
  intros x. apply Rabs_le. split.
  - assert (A := gelu_prime_min x). rewrite gelu_prime_at_minus_sqrt2 in A.
    assert (B := erf_minus_one_bound). assert (C := erf_nonneg 1 ltac:(lra)).
    unfold M. lra.
  - rewrite <- (proj1 gelu_prime_at_sqrt2). apply gelu_prime_max.
Qed.

(* ffn.lipschitz, certified step: |GELU'(x)| <= M on [-8, 8], tight at sqrt 2. *)
Lemma gelu_prime_bounded : forall x, -8 <= x <= 8 -> Rabs (gelu_prime x) <= M.
Proof. intros x _. apply gelu_prime_global. Qed.
