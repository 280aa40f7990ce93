def generate(out, scale, rng):
    return []
