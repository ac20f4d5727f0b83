"""Shared oracle machinery: the spec's addressing rules and numeric conversions, vectorised."""
