"""Live fuzzing: Hypothesis drives case generation against a backend and shrinks failures."""
