"""Synthetic arena files (placeholder while the format is being written)."""


def generate(out, scale, rng):
    return []
