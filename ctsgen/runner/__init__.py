"""Running packs on a backend: batching, verdicts, results files."""
