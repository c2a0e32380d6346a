"""Wu, Ajorlou, Wang, Jegelka, Jadbabaie (NeurIPS 2024): attention masks as graphs and the
LayerNorm counterexamples (their Figure 1 and Theorem 3), certified with ball arithmetic.

    fig1        the N = 2 counterexample of their Figure 1 (engine side)
    equilibria  equilibria of every rank (their Theorem 3 / Appendix F) (engine side)
    w_option    the entry w of W_V both take as --w: its cap and its reading
    reproduce   the float64 simulations behind their Figures 1-3
    studies     those figures as studies: the numbers behind each plot, the captions judged on them
    spot_check  one input per figure, its mu(X_T) enclosed in ball arithmetic
    export      a study's CSV and JSON files beside its figure

Masks as directed graphs (reachability, connectivity, centres, radius) are certify.core.graphs.

The trusted re-evaluation lives in certify_checker.wu_fig1 and certify_checker.ln_equilibria.
"""
