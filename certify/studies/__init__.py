"""Studies built on the engine: trajectories, initialisation scaling, the thesis's counterexamples,
Wu et al.'s figures and counterexamples, and real models."""
