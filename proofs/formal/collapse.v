(* Scalar lemmas of the collapse claims: collapse.global, collapse.cubic, collapse.tanh and
   collapse.trajectory (proofs/collapse_*.py).  All proofs are symbolic (field identities and
   the signs of their factors; Coquelicot derivatives and the mean value theorem for
   collapse.trajectory), on the classical reals only. *)
From Coq Require Import Reals Lra.
From Coquelicot Require Import Coquelicot.
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

(* collapse.global, step "The factor 1 - exp(-a D^2) lies in [0, 1) and increases with D". *)
Lemma global_factor_range : forall a D D', 0 < a -> 0 <= D <= D' ->
  0 <= 1 - exp (- (a * (D * D))) < 1 /\ 1 - exp (- (a * (D * D))) <= 1 - exp (- (a * (D' * D'))).
Proof.
  intros a D D' Ha HD.
  assert (Hp := exp_pos (- (a * (D * D)))).
  assert (H1 : exp (- (a * (D * D))) <= 1) by (rewrite <- exp_0; apply exp_le_mono; nra).
  assert (Hsq : D * D <= D' * D') by nra.
  assert (Ha2 : a * (D * D) <= a * (D' * D')) by (apply Rmult_le_compat_l; lra).
  assert (H2 : exp (- (a * (D' * D'))) <= exp (- (a * (D * D)))) by (apply exp_le_mono; lra).
  lra.
Qed.

(* collapse.tanh, step "Two-point value": with weight w on M and 1 - w on m, sum q r = 1 gives
   w = (1 - m)/(M - m) and TV = w (M - 1) = (1 - m)(M - 1)/(M - m). *)
Lemma tanh_two_point_value : forall m M w, m < M -> w * M + (1 - w) * m = 1 ->
  w = (1 - m) / (M - m) /\ w * (M - 1) = (1 - m) * (M - 1) / (M - m).
Proof.
  intros m M w Hm Hw.
  assert (E : w = (1 - m) / (M - m)).
  { apply (Rmult_eq_reg_r (M - m)); [ | lra ]. unfold Rdiv.
    rewrite Rmult_assoc, Rinv_l by lra. lra. }
  split; [ exact E | rewrite E; field; lra ].
Qed.

(* collapse.tanh, step "Maximised over m at m = exp(-Delta/2)": over the ratios' lower end
   m > 0 (upper end M = m e^Delta), TV(m) = (1 - m)(M - 1)/(M - m) <= tanh(Delta/4): with
   b = exp(Delta/4) the gap is (m b^2 - 1)^2 / (m (b^4 - 1)), zero exactly at m = exp(-Delta/2). *)
Lemma tanh_two_point_le : forall Delta m, 0 < Delta -> 0 < m ->
  (1 - m) * (m * exp Delta - 1) / (m * exp Delta - m) <= tanh (Delta / 4).
Proof.
  intros Delta m HD Hm. rewrite tanh_as_ratio.
  assert (Hb := exp_pos (Delta / 4)).
  assert (Hb1 : 1 < exp (Delta / 4)) by (rewrite <- exp_0; apply exp_increasing; lra).
  replace (exp Delta) with (exp (Delta / 4) * exp (Delta / 4) * (exp (Delta / 4) * exp (Delta / 4)))
    by (rewrite <- !exp_plus; f_equal; field).
  replace (exp (- (2 * (Delta / 4)))) with (/ (exp (Delta / 4) * exp (Delta / 4)))
    by (rewrite <- exp_plus, <- exp_Ropp; f_equal; field).
  set (b := exp (Delta / 4)) in *.
  assert (Hb2 : 1 < b * b) by nra.
  assert (Hb4 : 1 < b * b * (b * b)) by nra.
  assert (E : (1 - / (b * b)) / (1 + / (b * b))
              - (1 - m) * (m * (b * b * (b * b)) - 1) / (m * (b * b * (b * b)) - m)
              = (m * (b * b) - 1) * (m * (b * b) - 1) / (m * (b * b * (b * b) - 1))).
  { field. repeat split; nra. }
  assert (0 <= (m * (b * b) - 1) * (m * (b * b) - 1) / (m * (b * b * (b * b) - 1))).
  { apply div_nonneg; [ apply Rle_0_sqr | apply Rmult_lt_0_compat; lra ]. }
  lra.
Qed.

(* collapse.tanh, step "The maximum is tanh(Delta/4)":
   (1 - e^{-D/2})(e^{D/2} - 1)/(e^{D/2} - e^{-D/2}) = tanh(D/4), for D > 0. *)
Lemma tanh_two_point_at_best : forall Delta, 0 < Delta ->
  (1 - exp (- (Delta / 2))) * (exp (Delta / 2) - 1) / (exp (Delta / 2) - exp (- (Delta / 2)))
  = tanh (Delta / 4).
Proof.
  intros Delta HD. rewrite tanh_as_ratio. replace (2 * (Delta / 4)) with (Delta / 2) by field.
  assert (Hb := exp_pos (Delta / 2)).
  assert (Hb1 : 1 < exp (Delta / 2)) by (rewrite <- exp_0; apply exp_increasing; lra).
  replace (exp (- (Delta / 2))) with (/ exp (Delta / 2)) by (rewrite exp_Ropp; reflexivity).
  set (b := exp (Delta / 2)) in *.
  field. repeat split; try nra.
Qed.

(* collapse.tanh, step "Attained: two antipodal tokens": with p = e^L / (e^L + e^-L),
   (p s - (1 - p) s - ((1 - p) s - p s)) / (2 s) = tanh(L). *)
Lemma tanh_antipodal_ratio : forall L s, 0 < s ->
  let p := exp L / (exp L + exp (- L)) in
  (p * s + (1 - p) * (- s) - ((1 - p) * s + p * (- s))) / (2 * s) = tanh L.
Proof.
  intros L s Hs p. unfold p, tanh, sinh, cosh.
  assert (H1 := exp_pos L). assert (H2 := exp_pos (- L)).
  field. lra.
Qed.

(* collapse.cubic, step "Closed form solves the recursion": b_t = a^{-1/2} (sqrt(a) D_0)^{3^t}
   has b_0 = D_0 and b_{t+1} = a b_t^3. *)
Lemma cubic_closed_form : forall a D0 t, 0 < a ->
  let b := fun k => / sqrt a * (sqrt a * D0) ^ (3 ^ k) in
  b 0%nat = D0 /\ b (S t) = a * (b t) ^ 3.
Proof.
  intros a D0 t Ha b. unfold b.
  assert (Hs := sqrt_lt_R0 a Ha). assert (Hsq := sqrt_sqrt a (Rlt_le _ _ Ha)).
  split.
  - simpl. field. lra.
  - rewrite Nat.pow_succ_r', Nat.mul_comm, pow_mult.
    set (X := (sqrt a * D0) ^ 3 ^ t). set (r := sqrt a) in *.
    rewrite <- Hsq. field. lra.
Qed.

(* collapse.cubic, step "Induction step: D -> a D^3 is increasing on D >= 0". *)
Lemma cubic_monotone : forall a D D', 0 <= a -> 0 <= D <= D' -> a * D ^ 3 <= a * D' ^ 3.
Proof.
  intros a D D' Ha HD. apply Rmult_le_compat_l; [ exact Ha | ].
  apply pow_incr. exact HD.
Qed.

(* collapse.trajectory: g_a(D) = (1 - exp(-a D^2)) D and h(y) = 1 + (2y - 1) exp(-y). *)
Definition g (a D : R) : R := (1 - exp (- (a * (D * D)))) * D.
Definition h (y : R) : R := 1 + (2 * y - 1) * exp (- y).

(* collapse.trajectory, step "Derivative, reduced to one variable": g_a'(D) = h(a D^2). *)
Lemma trajectory_derivative : forall a D, is_derive (g a) D (h (a * (D * D))).
Proof. intros a D. unfold g, h. auto_derive; [ exact I | ring ]. Qed.

(* collapse.trajectory, step "h vanishes at y = 0": h(0) = 0 and h'(y) = (3 - 2y) exp(-y). *)
Lemma trajectory_h_zero : h 0 = 0 /\ forall y, is_derive h y ((3 - 2 * y) * exp (- y)).
Proof.
  split.
  - unfold h. rewrite Ropp_0, exp_0. ring.
  - intros y. unfold h. auto_derive; [ exact I | ring ].
Qed.

Lemma trajectory_h_pos_everywhere : forall y, 0 < y -> 0 < h y.
Proof.
  intros y Hy. unfold h. destruct (Rle_or_lt y (1 / 2)) as [Hle | Hgt].
  - apply trajectory_h_pos. lra.
  - assert (H := trajectory_h_tail y (Rlt_le _ _ Hgt)). lra.
Qed.

(* g_a is increasing in D >= 0: the mean value theorem with g_a' = h(a D^2) > 0. *)
Lemma trajectory_g_increasing : forall a D D', 0 < a -> 0 <= D <= D' -> g a D <= g a D'.
Proof.
  intros a D D' Ha [HD HDD']. destruct (Rle_lt_or_eq_dec D D' HDD') as [Hlt | ->]; [ | lra ].
  destruct (MVT_cor2 (g a) (fun c => h (a * (c * c))) D D' Hlt) as [c [E Hc]].
  - intros c _. apply is_derive_Reals, trajectory_derivative.
  - assert (Hcc : 0 < c * c) by (apply Rmult_lt_0_compat; lra).
    assert (0 < h (a * (c * c))) by (apply trajectory_h_pos_everywhere, Rmult_lt_0_compat; lra).
    assert (0 <= h (a * (c * c)) * (D' - D)) by (apply Rmult_le_pos; lra).
    lra.
Qed.

(* collapse.trajectory, step "Induction through the layers": if D_{t-1} <= b_{t-1} and
   D_t <= g_a(D_{t-1}) (collapse.global), then D_t <= g_a(b_{t-1}) = b_t. *)
Lemma trajectory_induction_step : forall a D_prev b_prev D_next, 0 < a -> 0 <= D_prev <= b_prev ->
  D_next <= g a D_prev -> D_next <= g a b_prev.
Proof.
  intros a D_prev b_prev D_next Ha HD Hnext.
  assert (H := trajectory_g_increasing a D_prev b_prev Ha HD). lra.
Qed.

(* collapse.trajectory, step "g_a(D) also increases with a". *)
Lemma trajectory_g_increases_with_a : forall a a' D, 0 <= a <= a' -> 0 <= D -> g a D <= g a' D.
Proof.
  intros a a' D Ha HD. unfold g. apply Rmult_le_compat_r; [ exact HD | ].
  assert (Hsq : 0 <= D * D) by nra.
  assert (a * (D * D) <= a' * (D * D)) by (apply Rmult_le_compat_r; lra).
  assert (exp (- (a' * (D * D))) <= exp (- (a * (D * D)))) by (apply exp_le_mono; lra).
  lra.
Qed.
