"""Wu, Ajorlou, Wang, Jegelka, Jadbabaie (NeurIPS 2024): attention masks as graphs and the
LayerNorm counterexamples (their Figure 1 and Theorem 3), certified with ball arithmetic.

    graphs      masks as directed graphs: reachability, connectivity, centres, radius
    fig1        the N = 2 counterexample of their Figure 1 (engine side)
    equilibria  equilibria of every rank (their Theorem 3 / Appendix F) (engine side)
    w_option    the entry w of W_V both take as --w: its cap and its reading

The trusted re-evaluation lives in certify_checker.wu_fig1 and certify_checker.ln_equilibria.
"""
