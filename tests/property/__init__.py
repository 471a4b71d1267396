"""Hypothesis property tests of the pure core."""
