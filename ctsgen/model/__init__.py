"""The case model's shared vocabulary, named as the specs name things."""
