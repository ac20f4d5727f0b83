"""What a device advertises, and whether a shader variant fits it."""
